package org.jdapl.registry;

import static org.jdapl.registry.Registries.assertNotRegistered;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProviderInfo;
import org.jdapl.dat.RegistryEntry;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.registry.conf.DatConfLocator;
import org.jdapl.registry.conf.DatConfParser;
import org.jdapl.registry.conf.ParseResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The REG assertions of CONFORMANCE.md, one test each; results go to target/conformance/registry.txt. */
@ExtendWith(ConformanceReport.class)
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RegistryConformanceTest {
    @TempDir
    Path dir;

    @Test
    void REG_01_datConfParsedWithUdaplGrammarAndMalformedLineSkippedWithLineNumber() {
        String text = """
                # dat.conf with every grammar feature

                emu0 u2.0 threadsafe default emu emu.1.0 loopback ""   # trailing comment
                \t"quoted name" u2.0 nonthreadsafe nondefault emu emu.1.0 "a \\"b\\" \\\\c #not-a-comment" "x y"
                broken u2.0 threadsafe default emu emu.1.0 "only seven"
                ofa-v2-ib0 u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "ib0 0" ""
                """;
        ParseResult result = DatConfParser.parse(text, "t.conf");
        assertTrue(result.ok());
        assertEquals(3, result.entries().size());
        assertEquals("emu0", result.entries().get(0).iaName());
        assertEquals("loopback", result.entries().get(0).iaParams());
        assertEquals("", result.entries().get(0).platformParams());
        assertEquals("t.conf:3", result.entries().get(0).source());
        var quoted = result.entries().get(1);
        assertEquals("quoted name", quoted.iaName());
        assertFalse(quoted.threadSafe());
        assertFalse(quoted.isDefault());
        assertEquals("a \"b\" \\c #not-a-comment", quoted.iaParams());
        assertEquals("x y", quoted.platformParams());
        assertEquals("ib0 0", result.entries().get(2).iaParams());
        assertEquals("t.conf:6", result.entries().get(2).source());
        assertEquals(1, result.problemCount());
        assertEquals(5, result.problems().getFirst().line());
        assertTrue(result.problems().getFirst().message().contains("7 fields"), result.problems().toString());

        ProviderRegistry registry = Registries.withDatConf(dir, text);
        assertTrue(registry.configurationSource().contains("1 line skipped"), registry.configurationSource());
        assertTrue(registry.problems().stream().anyMatch(p -> p.endsWith("dat.conf:5: has 7 fields; an entry has 8: "
                + "ia_name api_version threadsafety default lib_path provider_version ia_params platform_params")),
                registry.problems().toString());
        assertEquals(List.of("emu0", "quoted name", "ofa-v2-ib0"),
                registry.entries().stream().map(RegistryEntry::iaName).toList());
    }

    @Test
    void REG_02_openByNameWithDefaultEntrySucceedsAndUnknownNameFailsNameNotRegistered() {
        ProviderRegistry registry = Registries.withDatConf(dir,
                "emu0 u2.0 threadsafe default emu emu.1.0 loopback \"\"\n");
        TestProvider emu = TestProvider.named("emu");
        registry.addProvider(emu);

        InterfaceAdapter ia = registry.open("emu0", 8);
        assertEquals("emu0", ia.name());
        assertEquals(1, registry.openCount("emu"));
        IaSpec spec = emu.opened().getFirst();
        assertEquals("loopback", spec.iaParams());
        assertTrue(spec.threadSafe());
        assertTrue(spec.source().endsWith("dat.conf:1"), spec.source());
        ia.close();
        assertEquals(0, registry.openCount("emu"));

        DatException e = assertNotRegistered(() -> registry.open("no-such-ia", 8));
        assertEquals(0x800a0000 | (e.code() & 0xffff), e.code());
        assertTrue(e.getMessage().contains("no-such-ia"), e.getMessage());
    }

    @Test
    void REG_03_nondefaultKernelAndVersionMismatchedEntriesAreNotOpened() {
        ProviderRegistry registry = Registries.withDatConf(dir, """
                nd u2.0 threadsafe nondefault emu emu.1.0 loopback ""
                kern k2.0 threadsafe default emu emu.1.0 loopback ""
                old u1.2 threadsafe default emu emu.1.0 loopback ""
                new u2.1 threadsafe default emu emu.1.0 loopback ""
                """);
        TestProvider emu = TestProvider.named("emu");
        registry.addProvider(emu);
        for (String name : List.of("nd", "kern", "old", "new")) {
            assertNotRegistered(() -> registry.open(name, 8));
        }
        assertNotRegistered(() -> registry.openv("old", 8, 1, 2, true));
        assertNotRegistered(() -> registry.openv("kern", 8, 2, 0, true));
        assertNotRegistered(() -> registry.openv("new", 8, 2, 1, true));
        assertTrue(emu.opened().isEmpty(), "the provider was asked to open " + emu.opened());
        List<RegistryEntry> entries = registry.entries();
        assertEquals(4, entries.size());
        entries.forEach(e -> assertFalse(e.openable(), e.toString()));
        assertTrue(entries.get(0).status().startsWith("nondefault"), entries.get(0).status());
        assertTrue(entries.get(1).status().startsWith("kernel"), entries.get(1).status());
        assertTrue(entries.get(2).status().contains("u1.2"), entries.get(2).status());
        assertTrue(registry.listProviders().isEmpty(), registry.listProviders().toString());
    }

    @Test
    void REG_04_overrideLocatesFileAndUnreadableOverrideFailsWithoutFallback() {
        Path fromProperty = Registries.write(dir.resolve("property.conf"),
                "viaProperty u2.0 threadsafe default emu emu.1.0 p \"\"\n");
        Path fromEnv = Registries.write(dir.resolve("env.conf"), "viaEnv u2.0 threadsafe default emu emu.1.0 e \"\"\n");
        Registries.write(dir.resolve("etc-dat.conf"), "viaDefault u2.0 threadsafe default emu emu.1.0 d \"\"\n");
        TestProvider emu = TestProvider.withDefault("emu", "emu0", "loopback");

        ProviderRegistry byEnv = new ProviderRegistry(Registries.locator(dir,
                Map.of(DatConfLocator.ENVIRONMENT_VARIABLE, fromEnv.toString()), Map.of()));
        byEnv.configure(Map.of());
        byEnv.addProvider(emu);
        byEnv.open("viaEnv", 4).close();
        assertNotRegistered(() -> byEnv.open("viaDefault", 4));
        assertTrue(byEnv.configurationSource().contains("DAT_OVERRIDE"), byEnv.configurationSource());

        ProviderRegistry byProperty = new ProviderRegistry(Registries.locator(dir,
                Map.of(DatConfLocator.ENVIRONMENT_VARIABLE, fromEnv.toString()),
                Map.of(DatConfLocator.SYSTEM_PROPERTY, fromProperty.toString())));
        byProperty.configure(Map.of());
        byProperty.addProvider(emu);
        byProperty.open("viaProperty", 4).close();
        assertNotRegistered(() -> byProperty.open("viaEnv", 4));

        Path missing = dir.resolve("missing.conf");
        ProviderRegistry broken = new ProviderRegistry(Registries.locator(dir,
                Map.of(DatConfLocator.ENVIRONMENT_VARIABLE, missing.toString()), Map.of()));
        broken.configure(Map.of());
        broken.addProvider(emu);
        DatException e = assertNotRegistered(() -> broken.open("viaDefault", 4));
        assertTrue(e.getMessage().contains(missing.toString()) && e.getMessage().contains("nothing is loaded")
                && e.getMessage().contains("DAT_OVERRIDE"), e.getMessage());
        assertNotRegistered(() -> broken.open("emu0", 4));
        assertTrue(broken.configurationSource().startsWith("error:"), broken.configurationSource());
        assertTrue(broken.listProviders().isEmpty());
        assertTrue(broken.entries().stream().noneMatch(RegistryEntry::openable));
        assertTrue(emu.opened().stream().noneMatch(s -> s.iaName().equals("viaDefault") || s.iaName().equals("emu0")));
    }

    @Test
    void REG_05_listingShowsEveryIaNameAndWhetherItsProviderIsPresent() {
        ProviderRegistry registry = Registries.withDatConf(dir, """
                emu1 u2.0 threadsafe default emu emu.1.0 loopback ""
                far u2.0 threadsafe default tcpx tcpx.1.0 "" ""
                ofa-v2-ib0 u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "ib0 0" ""
                cma u1.2 nonthreadsafe default libdaplcma.so.1 dapl.1.2 "ib0 0" ""
                nodev u2.0 threadsafe default emu emu.1.0 "no-such-device" ""
                """);
        registry.addProvider(new TestProvider("emu", Set.of(), true,
                List.of(new IaSpec("emu0", "loopback", "", true, "emu")), spec -> !spec.iaParams().startsWith("no-")));
        List<RegistryEntry> entries = registry.entries();
        assertEquals(List.of("emu1", "far", "ofa-v2-ib0", "cma", "nodev", "emu0"),
                entries.stream().map(RegistryEntry::iaName).toList());
        Map<String, RegistryEntry> byName = entries.stream()
                .collect(java.util.stream.Collectors.toMap(RegistryEntry::iaName, e -> e));
        assertTrue(byName.get("emu1").present() && byName.get("emu1").openable());
        assertTrue(byName.get("emu0").openable());
        assertTrue(byName.get("emu0").source().startsWith("provider default"));
        assertFalse(byName.get("far").present());
        assertTrue(byName.get("far").status().contains("not provided"), byName.get("far").status());
        assertFalse(byName.get("ofa-v2-ib0").present());
        assertEquals("ofa", byName.get("ofa-v2-ib0").provider());
        assertTrue(byName.get("ofa-v2-ib0").status().contains("not present"), byName.get("ofa-v2-ib0").status());
        assertTrue(byName.get("nodev").present());
        assertFalse(byName.get("nodev").openable());
        assertTrue(byName.get("nodev").status().contains("no device"), byName.get("nodev").status());
        assertEquals(List.of(new ProviderInfo("emu1", 2, 0, true), new ProviderInfo("emu0", 2, 0, true)),
                registry.listProviders());
    }

    /**
     * An open that races the provider's removal: the provider's bundle was updated and refreshed while
     * the open was under way, so the provider throws NoClassDefFoundError for a class it had not loaded
     * yet. The consumer gets PROVIDER_NOT_FOUND, as for any provider that went away, not the error.
     */
    @Test
    void REG_06_anOpenRacingTheProvidersRemovalFailsProviderNotFoundNotALinkageError() {
        ProviderRegistry registry = Registries.withDatConf(dir, """
                gone0 u2.0 threadsafe default gone gone.1.0 p0 ""
                """);
        ProviderRegistry[] self = {registry};
        TestProvider[] provider = new TestProvider[1];
        provider[0] = new TestProvider("gone", Set.of(), true, List.of(), spec -> true) {
            @Override
            public InterfaceAdapter open(org.jdapl.dat.spi.IaSpec spec, int asyncEvdMinQlen) {
                self[0].removeProvider(provider[0]); // the bundle leaves while the open is under way
                throw new NoClassDefFoundError("org/example/gone/IaInternals");
            }
        };
        registry.addProvider(provider[0]);
        DatException e = assertThrows(DatException.class, () -> registry.openv("gone0", 4, 2, 0, true));
        assertEquals(DatReturnType.PROVIDER_NOT_FOUND, e.type(), e.getMessage());
        assertTrue(e.getMessage().contains("was removed while the IA was opened"), e.getMessage());
        assertNotRegistered(() -> registry.open("gone0", 4));
    }

    /** The same race when the open returns: the abort of the IA nobody may use fails for want of classes. */
    @Test
    void REG_06_anIaOpenedAsTheProviderLeftIsAbortedEvenIfItsAbortFailsForWantOfClasses() {
        ProviderRegistry registry = Registries.withDatConf(dir, """
                gone1 u2.0 threadsafe default gone gone.1.0 p0 ""
                """);
        ProviderRegistry[] self = {registry};
        TestProvider[] provider = new TestProvider[1];
        provider[0] = new TestProvider("gone", Set.of(), true, List.of(), spec -> true) {
            @Override
            public InterfaceAdapter open(org.jdapl.dat.spi.IaSpec spec, int asyncEvdMinQlen) {
                InterfaceAdapter ia = super.open(spec, asyncEvdMinQlen);
                self[0].removeProvider(provider[0]);
                return ia;
            }

            @Override
            public void abort(InterfaceAdapter ia, String reason) {
                throw new NoClassDefFoundError("org/example/gone/Wakeups");
            }
        };
        registry.addProvider(provider[0]);
        DatException e = assertThrows(DatException.class, () -> registry.openv("gone1", 4, 2, 0, true));
        assertEquals(DatReturnType.PROVIDER_NOT_FOUND, e.type(), e.getMessage());
        assertTrue(e.getMessage().contains("was removed while the IA was opened"), e.getMessage());
    }

    @Test
    void REG_06_providerAddedLaterIsOpenableAndRemovedProviderBreaksItsIas() throws Exception {
        ProviderRegistry registry = Registries.withDatConf(dir, """
                late0 u2.0 threadsafe default late late.1.0 p0 ""
                late1 u2.0 threadsafe default late late.1.0 p1 ""
                """);
        assertNotRegistered(() -> registry.open("late0", 4));
        assertFalse(registry.entries().getFirst().present());

        TestProvider late = TestProvider.named("late");
        registry.addProvider(late);
        assertTrue(registry.entries().getFirst().openable());
        InterfaceAdapter ia0 = registry.open("late0", 4);
        InterfaceAdapter ia1 = registry.open("late1", 4);
        EventDispatcher evd = ia0.createEvd(4, null, Set.of(EvdFlag.DTO));
        assertEquals(2, registry.openCount("late"));
        assertEquals(2, late.openObjects().get(HandleType.IA));
        assertEquals(2, threads("late"));

        EventDispatcher async0 = ia0.query().asyncEvd();
        CompletableFuture<DatEvent> waiter = CompletableFuture.supplyAsync(() -> async0.waitEvent(
                TimeUnit.SECONDS.toMicros(10)), runnable -> Thread.ofPlatform().name("reg06-waiter").start(runnable));
        TestEvd testAsync = (TestEvd) async0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (testAsync.waiters() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(1, testAsync.waiters(), "the waiter did not start waiting");

        registry.removeProvider(late);

        DatEvent event = waiter.get(5, TimeUnit.SECONDS);
        DatEvent.AsyncError error = assertInstanceOf(DatEvent.AsyncError.class, event);
        assertEquals(EventNumber.ASYNC_ERROR_IA_CATASTROPHIC, error.number());
        assertSame(ia0, error.handle());
        assertTrue(error.detail().contains("late"), error.detail());
        for (Runnable call : List.<Runnable>of(ia0::query, ia1::query, evd::count, async0::count,
                () -> ia0.createEvd(1, null, Set.of(EvdFlag.DTO)))) {
            DatException e = assertThrows(DatException.class, call::run);
            assertEquals(DatReturnType.INVALID_HANDLE, e.type());
        }
        assertEquals(DatReturnSubtype.INVALID_HANDLE_IA, assertThrows(DatException.class, ia1::query).subtype());
        assertEquals(0, registry.openCount("late"));
        assertEquals(2, late.aborts().size());
        assertEquals(0, late.openObjects().get(HandleType.IA));
        assertEquals(0, late.openObjects().get(HandleType.EVD));
        assertEquals(0, threads("late"), "IA threads left behind");
        assertNotRegistered(() -> registry.open("late0", 4));
        assertFalse(registry.entries().getFirst().present());

        TestProvider again = TestProvider.named("late");
        registry.addProvider(again);
        InterfaceAdapter reopened = registry.open("late0", 4);
        assertEquals(1, registry.openCount("late"));
        reopened.close();
        assertEquals(0, registry.openCount("late"));
        registry.removeProvider(again);
        assertTrue(again.aborts().isEmpty(), "a closed IA was aborted");
        assertEquals(0, threads("late"));
    }

    @Test
    void REG_07_ofedDatConfReadUnchangedMapsOntoOfaProvider() {
        String ofed = """
                # OFED /etc/dat.conf
                ofa-v2-ib0 u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "ib0 0" ""
                ofa-v2-mlx4_0-1 u2.0 nonthreadsafe default libdaploscm.so.2 dapl.2.0 "mlx4_0 1" ""
                ofa-v2-mlx4_0-1u u2.0 nonthreadsafe default libdaploucm.so.2 dapl.2.0 "mlx4_0 1" ""
                OpenIB-cma u1.2 nonthreadsafe default libdaplcma.so.1 dapl.1.2 "ib0 0" ""
                """;
        ProviderRegistry registry = Registries.withDatConf(dir, ofed);
        List<RegistryEntry> before = registry.entries();
        assertEquals(4, before.size());
        for (RegistryEntry e : before.subList(0, 3)) {
            assertEquals("ofa", e.provider(), e.toString());
            assertFalse(e.present());
        }
        assertEquals(null, before.get(3).provider());
        assertTrue(before.get(3).status().contains("u1.2"), before.get(3).status());

        TestProvider ofa = new TestProvider("ofa", Set.of(), true, List.of(), spec -> true);
        registry.addProvider(ofa);
        for (RegistryEntry e : registry.entries().subList(0, 3)) {
            assertTrue(e.present() && e.openable(), e.toString());
            assertFalse(e.threadSafe());
        }
        try (InterfaceAdapter ib = registry.openv("ofa-v2-ib0", 8, Dat.VERSION_MAJOR, Dat.VERSION_MINOR, false);
             InterfaceAdapter scm = registry.openv("ofa-v2-mlx4_0-1", 8, 2, 0, false);
             InterfaceAdapter ucm = registry.openv("ofa-v2-mlx4_0-1u", 8, 2, 0, false)) {
            assertNotNull(ib);
            assertNotNull(scm);
            assertNotNull(ucm);
            assertEquals(List.of("ib0 0", "mlx4_0 1", "mlx4_0 1"),
                    ofa.opened().stream().map(IaSpec::iaParams).toList());
            assertEquals(3, registry.openCount("ofa"));
        }
        assertEquals(0, registry.openCount("ofa"));
        assertTrue(registry.providersRelated("ofa-v2-mlx4_0-1", "ofa-v2-mlx4_0-1u"));
        assertFalse(registry.providersRelated("ofa-v2-ib0", "ofa-v2-mlx4_0-1"));
        assertNotRegistered(() -> registry.openv("OpenIB-cma", 8, 1, 2, false));
    }

    private static long threads(String provider) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith(TestProvider.THREAD_PREFIX + provider + "-")).count();
    }

}
