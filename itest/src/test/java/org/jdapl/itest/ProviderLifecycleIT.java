package org.jdapl.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatHandle;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.RegistryEntry;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.spi.DatProvider;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.wiring.FrameworkWiring;

/**
 * REG_06 in the container: a provider (or the registry) that goes away while a consumer holds
 * open, connected IAs. The consumer gets ASYNC_ERROR_IA_CATASTROPHIC on each asynchronous EVD,
 * BROKEN or DISCONNECTED on each connect EVD and its receives flushed; every handle then fails
 * INVALID_HANDLE. When the bundle is back, new IAs open and connect. No thread and no provider
 * object outlives it.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ProviderLifecycleIT extends JdaplContainerTest {

    @Test
    public void REG_06_stoppingTheEmulatedProviderBreaksOpenIasAndStartingItServesNewOnes() throws Exception {
        Bundle emuBundle = installedBundle(EMU_BSN);
        breakUnder(() -> emuBundle.stop(), () -> {
            DatRegistry registry = awaitService(DatRegistry.class, null);
            RegistryEntry emu0 = registry.entries().stream().filter(e -> e.iaName().equals("emu0")).findFirst()
                    .orElse(null);
            assertTrue("emu0 is not openable while its provider is away: " + emu0, emu0 == null || !emu0.openable());
            try {
                registry.open("emu0", 8).close();
                fail("emu0 opened with its provider away");
            } catch (DatException e) {
                assertEquals(e.getMessage(), DatReturnType.PROVIDER_NOT_FOUND, e.type());
            }
        }, () -> emuBundle.start(), true);
    }

    @Test
    public void REG_06_updatingTheEmulatedProviderBreaksOpenIasAndTheNewRevisionServes() throws Exception {
        Bundle emuBundle = installedBundle(EMU_BSN);
        breakUnder(() -> {
            emuBundle.update();
            refresh(emuBundle);
        }, () -> { }, () -> { }, true);
        assertEquals(Bundle.ACTIVE, emuBundle.getState());
    }

    @Test
    public void REG_06_restartingTheRegistryBreaksOpenIasAndTheNewRegistryServes() throws Exception {
        Bundle registryBundle = installedBundle(REGISTRY_BSN);
        breakUnder(() -> registryBundle.stop(), () -> awaitServiceGone(DatRegistry.class, null),
                () -> registryBundle.start(), false);
    }

    /** A bundle operation that may throw. */
    interface BundleAction {
        void run() throws Exception;
    }

    /**
     * Opens a connected pair, runs {@code takeAway} and checks the consumer's view of the break,
     * runs {@code whileAway}, runs {@code bringBack} and checks that a new pair opens and connects,
     * then that threads and provider objects are back at their baseline.
     */
    void breakUnder(BundleAction takeAway, BundleAction whileAway, BundleAction bringBack,
                            boolean providerLeaves) throws Exception {
        DatRegistry registry = awaitService(DatRegistry.class, null);
        DatProvider emu = awaitService(DatProvider.class, "(dat.provider=emu)");
        ContainerIT.assertAllZero(emu.openObjects());
        Set<Thread> baseline = liveThreads();
        int baselineCount = baseline.size();

        List<Thread> waiters = new ArrayList<>();
        try (ConnectedPair pair = ConnectedPair.open(registry, "emu0")) {
            List<CompletableFuture<DatEvent>> asyncEvents = new ArrayList<>();
            List<CompletableFuture<DatEvent>> connectionEvents = new ArrayList<>();
            List<CompletableFuture<DatEvent>> receiveEvents = new ArrayList<>();
            CountDownLatch waiting = new CountDownLatch(6);
            for (ConnectedPair.Side side : List.of(pair.active, pair.passive)) {
                asyncEvents.add(waitOn(side.asyncEvd(), waiters, waiting));
                connectionEvents.add(waitOn(side.connEvd, waiters, waiting));
                receiveEvents.add(waitOn(side.recvEvd, waiters, waiting));
            }
            assertTrue(waiting.await(5, TimeUnit.SECONDS));
            Thread.sleep(100);   // the waiters are inside waitEvent

            takeAway.run();

            for (var f : asyncEvents) {
                DatEvent e = f.get(20, TimeUnit.SECONDS);
                assertTrue("an async error: " + e, e instanceof DatEvent.AsyncError);
                assertEquals(EventNumber.ASYNC_ERROR_IA_CATASTROPHIC, e.number());
            }
            for (var f : connectionEvents) {
                DatEvent e = f.get(20, TimeUnit.SECONDS);
                assertTrue("BROKEN or DISCONNECTED: " + e, e.number() == EventNumber.CONNECTION_BROKEN
                        || e.number() == EventNumber.CONNECTION_DISCONNECTED);
            }
            for (var f : receiveEvents) {
                DatEvent e = f.get(20, TimeUnit.SECONDS);
                assertTrue("the posted receive completes: " + e, e instanceof DatEvent.DtoCompletion);
                assertEquals(DtoStatus.FLUSHED, ((DatEvent.DtoCompletion) e).status());
            }
            for (DatHandle h : pair.handles()) {
                assertTrue(h + " is freed", h.isFreed());
                assertInvalidHandle(h, h::handleType);
                assertInvalidHandle(h, () -> operate(h));
            }
        }
        for (Thread t : waiters) {
            t.join(TimeUnit.SECONDS.toMillis(10));
        }
        ContainerIT.assertAllZero(emu.openObjects());   // the instance that left: nothing kept

        whileAway.run();
        bringBack.run();
        DatRegistry nowRegistry = awaitService(DatRegistry.class, null);
        DatProvider nowEmu = awaitService(DatProvider.class, "(dat.provider=emu)");
        if (providerLeaves) {
            assertNotSame("a new provider instance", emu, nowEmu);
        } else {
            assertNotSame("a new registry component", registry, nowRegistry);
        }
        await("emu0 is openable again: " + nowRegistry.entries(),
                () -> nowRegistry.entries().stream().anyMatch(e -> e.iaName().equals("emu0") && e.openable()));
        try (ConnectedPair again = ConnectedPair.open(nowRegistry, "emu0")) {
            assertEquals(EpState.CONNECTED, again.active.ep.query().state());
            assertEquals(EpState.CONNECTED, again.passive.ep.query().state());
        }

        ContainerIT.assertAllZero(nowEmu.openObjects());
        assertThreadsBackTo(baseline, baselineCount);
    }

    /** A call that the handle's kind answers: a query, a count, a post. */
    private static void operate(DatHandle h) {
        switch (h) {
            case InterfaceAdapter ia -> ia.query();
            case Endpoint ep -> ep.postRecv(List.of(), 3, Set.of());
            case EventDispatcher evd -> evd.count();
            case LocalMemoryRegion lmr -> lmr.query();
            case PublicServicePoint psp -> psp.query();
            case ProtectionZone pz -> pz.query();
            default -> h.consumerContext();
        }
    }

    private static void assertInvalidHandle(DatHandle h, Runnable call) {
        try {
            call.run();
            fail(h + " still answers");
        } catch (DatException e) {
            assertEquals(h + ": " + e.getMessage(), DatReturnType.INVALID_HANDLE, e.type());
        }
    }

    private static CompletableFuture<DatEvent> waitOn(EventDispatcher evd, List<Thread> threads, CountDownLatch started) {
        CompletableFuture<DatEvent> result = new CompletableFuture<>();
        threads.add(Thread.ofPlatform().name("itest-waiter").start(() -> {
            started.countDown();
            try {
                result.complete(evd.waitEvent(TimeUnit.SECONDS.toMicros(20)));
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        }));
        return result;
    }

    private void refresh(Bundle bundle) throws InterruptedException {
        CountDownLatch refreshed = new CountDownLatch(1);
        context.getBundle(0).adapt(FrameworkWiring.class).refreshBundles(List.of(bundle), event -> {
            if (event.getType() == FrameworkEvent.PACKAGES_REFRESHED) {
                refreshed.countDown();
            }
        });
        assertTrue("the refresh ends", refreshed.await(WAIT_MILLIS, TimeUnit.MILLISECONDS));
    }

    /**
     * The live threads, less the common fork-join pool's workers: the JVM keeps those for a minute
     * after any use, whoever made it, and they hold nothing of a provider.
     */
    private static Set<Thread> liveThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
                .filter(t -> !t.getName().startsWith("ForkJoinPool.commonPool-worker"))
                .collect(Collectors.toSet());
    }

    /** The threads started since the baseline have ended (the JVM's thread count is back). */
    private static void assertThreadsBackTo(Set<Thread> baseline, int baselineCount) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
        Set<Thread> extra;
        do {
            extra = liveThreads().stream().filter(t -> !baseline.contains(t)).collect(Collectors.toSet());
            if (extra.isEmpty()) {
                break;
            }
            Thread.sleep(50);
        } while (System.nanoTime() < deadline);
        assertTrue("threads left behind: " + extra.stream().map(Thread::getName).sorted().toList(), extra.isEmpty());
        int now = liveThreads().size();
        assertTrue("thread count " + now + " back to at most " + baselineCount, now <= baselineCount);
    }
}
