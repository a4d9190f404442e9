package org.jdapl.registry;

import static org.jdapl.registry.Registries.assertNotRegistered;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.RegistryEntry;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Selection details beyond the REG assertions: order, exact key, aliases, defaults, configurations. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RegistrySelectionTest {
    @TempDir
    Path dir;

    @Test
    void entriesOfOneNameAreTriedInFileOrderAndTheFirstThatOpensWins() {
        ProviderRegistry registry = Registries.withDatConf(dir, """
                dual u2.0 threadsafe default gone gone.1.0 g ""
                dual u2.0 threadsafe default hw hw.1.0 "no-device" ""
                dual u2.0 threadsafe default sw sw.1.0 "soft" ""
                dual u2.0 threadsafe default sw2 sw.1.0 "never asked" ""
                """);
        TestProvider hw = new TestProvider("hw", Set.of(), true, List.of(), spec -> false);
        TestProvider sw = TestProvider.named("sw");
        TestProvider sw2 = TestProvider.named("sw2");
        registry.addProvider(hw);
        registry.addProvider(sw);
        registry.addProvider(sw2);
        try (InterfaceAdapter ia = registry.open("dual", 4)) {
            assertEquals("soft", ((TestIa) ia).spec().iaParams());
        }
        assertEquals(List.of("no-device"), hw.opened().stream().map(IaSpec::iaParams).toList());
        assertTrue(sw2.opened().isEmpty());
    }

    @Test
    void everyProviderFailingGivesTheProvidersError() {
        ProviderRegistry registry = Registries.withDatConf(dir, """
                hard u2.0 threadsafe default hw hw.1.0 "mlx9 1" ""
                hard u2.0 threadsafe default absent x.1.0 "" ""
                """);
        registry.addProvider(new TestProvider("hw", Set.of(), true, List.of(), spec -> false));
        DatException e = assertThrows(DatException.class, () -> registry.open("hard", 4));
        assertEquals(DatReturnType.INSUFFICIENT_RESOURCES, e.type());
        assertEquals(DatReturnSubtype.RESOURCE_DEVICE, e.subtype());
        assertTrue(e.getMessage().contains("mlx9 1") && e.getMessage().contains("absent"), e.getMessage());
    }

    @Test
    void aProviderThatThrowsOrReturnsNothingIsAnInternalErrorNotACrash() {
        ProviderRegistry registry = Registries.withDatConf(dir,
                "bad u2.0 threadsafe default bad bad.1.0 \"\" \"\"\n");
        registry.addProvider(new TestProvider("bad", Set.of(), true, List.of(), spec -> true) {
            @Override
            public InterfaceAdapter open(IaSpec spec, int qlen) {
                throw new IllegalStateException("boom");
            }

            @Override
            public Set<String> libraryAliases() {
                throw new IllegalStateException("aliases boom");
            }
        });
        DatException e = assertThrows(DatException.class, () -> registry.open("bad", 4));
        assertEquals(DatReturnType.INTERNAL_ERROR, e.type());
        assertTrue(e.getMessage().contains("boom"));
        assertEquals(0, registry.openCount("bad"));
    }

    @Test
    void threadSafetyIsPartOfTheExactKey() {
        ProviderRegistry registry = Registries.withDatConf(dir,
                "nts u2.0 nonthreadsafe default emu emu.1.0 \"\" \"\"\n");
        registry.addProvider(TestProvider.named("emu"));
        DatException e = assertNotRegistered(() -> registry.openv("nts", 4, 2, 0, true));
        assertTrue(e.getMessage().contains("nonthreadsafe"), e.getMessage());
        registry.openv("nts", 4, 2, 0, false).close();
    }

    @Test
    void openFallsBackToANonThreadSafeEntryAsTheReferenceImplementationDoes() {
        ProviderRegistry registry = Registries.withDatConf(dir,
                "nts u2.0 nonthreadsafe default emu emu.1.0 \"\" \"\"\n");
        registry.addProvider(TestProvider.named("emu"));
        registry.open("nts", 4).close();
        assertNotRegistered(() -> registry.open("unknown", 4));
    }

    @Test
    void invalidArgumentsFailInvalidParameter() {
        ProviderRegistry registry = Registries.withDatConf(dir, "");
        assertEquals(DatReturnSubtype.INVALID_ARG1,
                assertThrows(DatException.class, () -> registry.open(null, 4)).subtype());
        assertEquals(DatReturnSubtype.INVALID_ARG1,
                assertThrows(DatException.class, () -> registry.open("x".repeat(257), 4)).subtype());
        assertEquals(DatReturnSubtype.INVALID_ARG2,
                assertThrows(DatException.class, () -> registry.open("x", 0)).subtype());
        assertEquals(DatReturnType.INVALID_PARAMETER,
                assertThrows(DatException.class, () -> registry.addProvider(null)).type());
    }

    @Test
    void providerDefaultsAreOpenableWithoutFileAndHiddenByAnEntryOfTheirName() {
        ProviderRegistry builtIn = new ProviderRegistry(Registries.locator(dir, Map.of(), Map.of()));
        builtIn.configure(Map.of());
        assertTrue(builtIn.configurationSource().startsWith("built-in default"), builtIn.configurationSource());
        TestProvider emu = TestProvider.withDefault("emu", "emu0", "loopback");
        builtIn.addProvider(emu);
        try (InterfaceAdapter ia = builtIn.open("emu0", 4)) {
            assertEquals("loopback", ((TestIa) ia).spec().iaParams());
        }
        assertEquals("provider default (emu)", builtIn.entries().getFirst().source());

        ProviderRegistry withEntry = Registries.withDatConf(dir,
                "emu0 u2.0 threadsafe nondefault emu emu.1.0 other \"\"\n");
        withEntry.addProvider(emu);
        assertEquals(1, withEntry.entries().size());
        assertNotRegistered(() -> withEntry.open("emu0", 4));
    }

    @Test
    void libraryAliasesAndOfaLibrariesNameProviders() {
        ProviderRegistry registry = Registries.withDatConf(dir, """
                viaAlias u2.0 threadsafe default libdaplemu.so.2 dapl.2.0 a ""
                viaOfa u2.0 threadsafe default libdaploucm.so.2 dapl.2.0 "mlx5_0 1" ""
                """);
        TestProvider emu = new TestProvider("emu", Set.of("libdaplemu.so.2"), true, List.of(), spec -> true);
        TestProvider ofa = TestProvider.named("ofa");
        registry.addProvider(emu);
        registry.addProvider(ofa);
        registry.open("viaAlias", 4).close();
        registry.open("viaOfa", 4).close();
        assertEquals(1, emu.opened().size());
        assertEquals("mlx5_0 1", ofa.opened().getFirst().iaParams());
        assertEquals(List.of("emu", "ofa"), registry.entries().stream().map(RegistryEntry::provider).toList());
    }

    @Test
    void providerNamesAreUniqueAndRemovalNeedsTheRegisteredProvider() {
        ProviderRegistry registry = Registries.withDatConf(dir, "");
        DatProvider first = TestProvider.named("emu");
        registry.addProvider(first);
        assertEquals(DatReturnType.PROVIDER_ALREADY_REGISTERED,
                assertThrows(DatException.class, () -> registry.addProvider(TestProvider.named("emu"))).type());
        assertEquals(DatReturnType.PROVIDER_NOT_FOUND,
                assertThrows(DatException.class, () -> registry.removeProvider(TestProvider.named("emu"))).type());
        registry.removeProvider(first);
        assertEquals(DatReturnType.PROVIDER_NOT_FOUND,
                assertThrows(DatException.class, () -> registry.removeProvider(first)).type());
    }

    @Test
    void referenceCountsFollowOpenAndClose() {
        ProviderRegistry registry = Registries.withDatConf(dir, "");
        registry.addProvider(TestProvider.withDefault("emu", "emu0", "loopback"));
        InterfaceAdapter a = registry.open("emu0", 4);
        InterfaceAdapter b = registry.open("emu0", 4);
        assertEquals(Map.of("emu", 2), registry.openCounts());
        assertTrue(registry.entries().getFirst().status().contains("2 IAs open"), registry.entries().toString());
        a.close();
        assertEquals(1, registry.openCount("emu"));
        b.close();
        assertEquals(0, registry.openCount("emu"));
        assertEquals(0, registry.openCount("nobody"));
    }

    @Test
    void providersRelatedComparesProviderAndIaParams() {
        ProviderRegistry registry = Registries.withDatConf(dir, """
                a u2.0 threadsafe default emu emu.1.0 loopback ""
                b u2.0 nonthreadsafe default emu emu.1.0 loopback ""
                c u2.0 threadsafe default emu emu.1.0 "tcp 0.0.0.0:0" ""
                d u2.0 threadsafe default other o.1.0 loopback ""
                """);
        registry.addProvider(TestProvider.named("emu"));
        assertTrue(registry.providersRelated("a", "b"));
        assertFalse(registry.providersRelated("a", "c"));
        assertFalse(registry.providersRelated("a", "d"));
        assertNotRegistered(() -> registry.providersRelated("a", "zzz"));
    }

    @Test
    void configuredIasJoinTheFileEntriesAndMalformedOnesAreReported() {
        ProviderRegistry registry = Registries.withDatConf(dir, "file0 u2.0 threadsafe default emu emu.1.0 f \"\"\n");
        TestProvider emu = TestProvider.named("emu");
        registry.addProvider(emu);
        registry.putConfiguredIa(ConfiguredIa.fromProperties("org.jdapl.registry.ia~one",
                Map.of("ia_name", "cfg0", "lib_path", "emu", "ia_params", "tcp 127.0.0.1:0")));
        registry.putConfiguredIa(ConfiguredIa.fromProperties("org.jdapl.registry.ia~two",
                Map.of("ia_name", "cfg1", "lib_path", "emu", "threadsafety", Boolean.FALSE, "api_version", "u9")));
        assertEquals(List.of("file0", "cfg0"), registry.entries().stream().map(RegistryEntry::iaName).toList());
        assertEquals("configuration org.jdapl.registry.ia~one", registry.entries().get(1).source());
        registry.open("cfg0", 4).close();
        assertEquals("tcp 127.0.0.1:0", emu.opened().getLast().iaParams());
        assertTrue(registry.configurationSource().contains("1 IA configuration (org.jdapl.registry.ia), 1 malformed"),
                registry.configurationSource());
        assertTrue(registry.problems().stream().anyMatch(p -> p.contains("~two") && p.contains("API version")),
                registry.problems().toString());
        registry.removeConfiguredIa("org.jdapl.registry.ia~one");
        assertNotRegistered(() -> registry.open("cfg0", 4));
    }

    @Test
    void reloadPicksUpAChangedFileAndKeepsOpenIas() {
        Path file = Registries.write(dir.resolve("dat.conf"), "one u2.0 threadsafe default emu emu.1.0 \"\" \"\"\n");
        ProviderRegistry registry = new ProviderRegistry(Registries.locator(dir, Map.of(),
                Map.of("dat.conf", file.toString())));
        registry.configure(Map.of());
        registry.addProvider(TestProvider.named("emu"));
        InterfaceAdapter one = registry.open("one", 4);
        Registries.write(file, "two u2.0 threadsafe default emu emu.1.0 \"\" \"\"\n");
        registry.reload();
        assertNotRegistered(() -> registry.open("one", 4));
        registry.open("two", 4).close();
        assertFalse(one.isFreed());
        assertEquals(1, registry.openCount("emu"));
        one.close();
    }

    @Test
    void removingAProviderWhileAnotherThreadOpensLeavesNoCountedIa() throws Exception {
        ProviderRegistry registry = Registries.withDatConf(dir, "");
        for (int round = 0; round < 20; round++) {
            TestProvider p = TestProvider.withDefault("race", "race0", "");
            registry.addProvider(p);
            Thread opener = Thread.ofPlatform().start(() -> {
                try {
                    registry.open("race0", 4);
                } catch (DatException expected) {
                    // the provider may be gone before or while the IA opens
                }
            });
            registry.removeProvider(p);
            opener.join(5000);
            assertFalse(opener.isAlive());
            assertEquals(0, registry.openCount("race"));
            assertEquals(0, p.openObjects().get(org.jdapl.dat.HandleType.IA), "round " + round);
        }
        assertEquals(0L, Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith(TestProvider.THREAD_PREFIX + "race")).count());
    }
}
