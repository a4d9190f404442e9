package org.jdapl.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.RegistryEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The registry's listeners (REG_06 told to plain Java consumers) and the standalone registry
 * configured by properties instead of system properties.
 */
class RegistryEventsTest {
    @TempDir
    Path dir;

    @Test
    void REG_06_listenersHearProvidersComeAndGoAndTheIasBrokenBetween() {
        ProviderRegistry registry = Registries.withDatConf(dir, "late0 u2.0 threadsafe default late late.1.0 p0 \"\"\n");
        List<RegistryEvent> heard = new CopyOnWriteArrayList<>();
        Consumer<RegistryEvent> listener = heard::add;
        registry.addListener(listener);
        registry.addListener(listener);
        registry.addListener(e -> {
            throw new IllegalStateException("a failing listener does not stop the others");
        });

        TestProvider late = TestProvider.named("late");
        registry.addProvider(late);
        InterfaceAdapter ia = registry.open("late0", 4);
        registry.removeProvider(late);

        assertEquals(3, heard.size(), heard.toString());
        RegistryEvent.ProviderAdded added = assertInstanceOf(RegistryEvent.ProviderAdded.class, heard.get(0));
        assertEquals("late", added.provider());
        RegistryEvent.IaBroken broken = assertInstanceOf(RegistryEvent.IaBroken.class, heard.get(1));
        assertSame(ia, broken.ia());
        assertEquals("late0", broken.iaName());
        assertEquals("late", broken.provider());
        assertTrue(ia.isFreed(), "the IA is broken before its event is sent");
        RegistryEvent.ProviderRemoved removed = assertInstanceOf(RegistryEvent.ProviderRemoved.class, heard.get(2));
        assertEquals(List.of("late0"), removed.brokenIas());

        registry.removeListener(listener);
        registry.addProvider(TestProvider.named("late"));
        assertEquals(3, heard.size(), "a removed listener was told");
    }

    @Test
    void REG_04_standaloneTakesItsDatConfAndIaDeclarationsFromProperties() {
        Path file = Registries.write(dir.resolve("dat.conf"),
                "svc-file u2.0 threadsafe default svc dapl.2.0 \"from-file\" \"\"\n");
        DatRegistry registry = DatRegistry.standalone(Map.of("dat.conf", file.toString(),
                "ia.svc-declared", "u2.0 threadsafe default svc dapl.2.0 \"declared\" \"\"",
                "ia.broken", "u2.0 threadsafe"));
        assertTrue(registry.configurationSource().contains(file.toString()), registry.configurationSource());
        try (InterfaceAdapter ia = registry.open("svc-file", 4)) {
            assertEquals("from-file", ((TestIa) ia).spec().iaParams());
        }
        try (InterfaceAdapter ia = registry.open("svc-declared", 4)) {
            assertEquals("declared", ((TestIa) ia).spec().iaParams());
        }
        StandaloneRegistry standalone = assertInstanceOf(StandaloneRegistry.class, registry);
        assertTrue(standalone.problems().stream().anyMatch(p -> p.contains("property ia.broken")),
                standalone.problems().toString());
    }
}
