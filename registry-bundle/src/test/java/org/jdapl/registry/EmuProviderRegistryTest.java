package org.jdapl.registry;

import static org.jdapl.registry.Registries.assertNotRegistered;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.provider.emu.EmuProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The registry with the emulated provider: built-in default, dat.conf entries, and provider removal. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EmuProviderRegistryTest {
    @TempDir
    Path dir;

    @Test
    void builtInDefaultOpensEmu0AndRemovalBreaksItsIas() throws Exception {
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        ProviderRegistry registry = new ProviderRegistry(Registries.locator(dir, Map.of(), Map.of()));
        registry.configure(Map.of());
        EmuProvider emu = new EmuProvider();
        registry.addProvider(emu);
        assertTrue(registry.entries().stream().anyMatch(e -> e.iaName().equals("emu0") && e.openable()),
                registry.entries().toString());

        InterfaceAdapter ia = registry.open("emu0", 8);
        EventDispatcher dto = ia.createEvd(8, null, Set.of(EvdFlag.DTO));
        EventDispatcher async = ia.query().asyncEvd();
        assertEquals(1, registry.openCount("emu"));
        CompletableFuture<DatEvent> waiter = CompletableFuture.supplyAsync(
                () -> async.waitEvent(TimeUnit.SECONDS.toMicros(20)),
                runnable -> Thread.ofPlatform().name("emu-async-waiter").start(runnable));
        Thread.sleep(200);

        registry.removeProvider(emu);

        DatEvent event = waiter.get(20, TimeUnit.SECONDS);
        DatEvent.AsyncError error = assertInstanceOf(DatEvent.AsyncError.class, event);
        assertEquals(EventNumber.ASYNC_ERROR_IA_CATASTROPHIC, error.number());
        assertSame(ia, error.handle());
        assertEquals(DatReturnType.INVALID_HANDLE, assertThrows(DatException.class, ia::query).type());
        assertEquals(DatReturnType.INVALID_HANDLE, assertThrows(DatException.class, dto::count).type());
        assertEquals(0, registry.openCount("emu"));
        assertTrue(emu.openObjects().values().stream().allMatch(n -> n == 0), emu.openObjects().toString());
        assertNotRegistered(() -> registry.open("emu0", 8));

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        Set<Thread> left;
        do {
            left = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> !before.contains(t) && t.isAlive() && !t.getName().startsWith("emu-async-waiter")
                            && !t.getName().startsWith("ForkJoinPool"))
                    .collect(java.util.stream.Collectors.toSet());
            if (!left.isEmpty()) {
                Thread.sleep(20);
            }
        } while (!left.isEmpty() && System.nanoTime() < deadline);
        assertTrue(left.isEmpty(), "threads left behind: " + left);
    }

    @Test
    void datConfEntryHandsItsIaParamsToEmu() {
        ProviderRegistry registry = Registries.withDatConf(dir,
                "emu-lo u2.0 threadsafe default emu emu.1.0 loopback \"\"\n");
        EmuProvider emu = new EmuProvider();
        registry.addProvider(emu);
        try (InterfaceAdapter ia = registry.open("emu-lo", 8)) {
            assertEquals("emu-lo", ia.name());
            assertEquals(1, registry.openCount("emu"));
        }
        assertEquals(0, registry.openCount("emu"));
        registry.removeProvider(emu);
    }
}
