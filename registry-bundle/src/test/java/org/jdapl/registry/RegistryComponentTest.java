package org.jdapl.registry;

import static org.jdapl.registry.Registries.assertNotRegistered;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.registry.conf.DatConfLocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The DS components driven as SCR drives them: activate, bind, unbind, modified. */
class RegistryComponentTest {
    @TempDir
    Path dir;

    @Test
    void configurationPropertyNamesTheFileAndModifiedReloadsIt() {
        Path a = Registries.write(dir.resolve("a.conf"), "fromA u2.0 threadsafe default emu emu.1.0 \"\" \"\"\n");
        Path b = Registries.write(dir.resolve("b.conf"), "fromB u2.0 threadsafe default emu emu.1.0 \"\" \"\"\n");
        RegistryComponent component = new RegistryComponent(Registries.locator(dir,
                Map.of(DatConfLocator.ENVIRONMENT_VARIABLE, b.toString()), Map.of()));
        component.bindProvider(TestProvider.named("emu"), Map.of());
        component.activate(Map.of(DatConfLocator.CONFIG_PROPERTY, a.toString()));
        component.open("fromA", 4).close();
        assertTrue(component.configurationSource().contains("configuration org.jdapl.registry"));
        component.modified(Map.of());
        component.open("fromB", 4).close();
        assertNotRegistered(() -> component.open("fromA", 4));
    }

    @Test
    void aSecondProviderOfOneNameWaitsAndTakesOverWhenTheFirstLeaves() {
        RegistryComponent component = new RegistryComponent(Registries.locator(dir, Map.of(), Map.of()));
        component.activate(Map.of());
        TestProvider first = TestProvider.withDefault("emu", "emu0", "first");
        TestProvider second = TestProvider.withDefault("emu", "emu0", "second");
        component.bindProvider(first, Map.of());
        component.bindProvider(second, Map.of());
        InterfaceAdapter ia = component.open("emu0", 4);
        assertEquals("first", ((TestIa) ia).spec().iaParams());
        component.unbindProvider(first);
        assertTrue(ia.isFreed());
        assertEquals(1, first.aborts().size());
        try (InterfaceAdapter next = component.open("emu0", 4)) {
            assertEquals("second", ((TestIa) next).spec().iaParams());
        }
        component.unbindProvider(second);
        assertNotRegistered(() -> component.open("emu0", 4));
    }

    @Test
    void aWaitingProviderThatLeavesIsForgotten() {
        RegistryComponent component = new RegistryComponent(Registries.locator(dir, Map.of(), Map.of()));
        component.activate(Map.of());
        TestProvider first = TestProvider.withDefault("emu", "emu0", "first");
        TestProvider second = TestProvider.withDefault("emu", "emu0", "second");
        component.bindProvider(first, Map.of());
        component.bindProvider(second, Map.of());
        component.unbindProvider(second);
        component.unbindProvider(first);
        assertNotRegistered(() -> component.open("emu0", 4));
        assertEquals(Map.of(), component.openCounts());
    }

    @Test
    void iaConfigurationsAreBoundAndUnbound() {
        RegistryComponent component = new RegistryComponent(Registries.locator(dir, Map.of(), Map.of()));
        component.activate(Map.of());
        component.bindProvider(new TestProvider("emu", Set.of(), true, List.of(), spec -> true), Map.of());
        ConfiguredIaComponent configuration = new ConfiguredIaComponent();
        Map<String, Object> properties = new HashMap<>();
        properties.put("service.pid", "org.jdapl.registry.ia~abc");
        properties.put("ia_name", "conf0");
        properties.put("lib_path", "emu");
        properties.put("ia_params", "tcp 127.0.0.1:0");
        configuration.activate(properties);
        component.bindConfiguredIa(configuration);
        try (InterfaceAdapter ia = component.open("conf0", 4)) {
            assertEquals("tcp 127.0.0.1:0", ((TestIa) ia).spec().iaParams());
        }
        assertEquals("configuration org.jdapl.registry.ia~abc", component.entries().getFirst().source());
        component.unbindConfiguredIa(configuration);
        assertNotRegistered(() -> component.open("conf0", 4));
    }
}
