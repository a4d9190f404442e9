package org.jdapl.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.ref.WeakReference;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatRegistry;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.spi.DatProvider;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.FrameworkEvent;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.wiring.BundleWiring;
import org.osgi.framework.wiring.FrameworkWiring;

/**
 * REG_06 a hundred times over: the emulated provider bundle stopped and started, or updated and
 * refreshed (a new bundle revision), cycle after cycle, while a consumer streams checked sends
 * through the registry. Each cycle breaks the consumer's open IAs (its waits end, its handles go
 * invalid), the consumer opens new ones once the provider is back and streams again; no
 * completion is reported twice or for a cookie never posted, and no message arrives wrong. At the
 * end the provider holds no object, and threads, file descriptors and direct memory are back at
 * the baseline, and the class loaders of the revisions that were updated away are collected.
 *
 * <p>{@code jdapl.itest.cycles} sets the number of cycles (default 100).
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class ProviderCyclesIT extends JdaplContainerTest {
    private static final int MESSAGE = 64;

    /** What the streaming consumer saw. */
    private static final class Consumer implements Runnable {
        final AtomicLong completed = new AtomicLong();
        final AtomicLong breaks = new AtomicLong();
        final AtomicLong reopens = new AtomicLong();
        final AtomicLong anomalies = new AtomicLong();
        final AtomicReference<String> firstAnomaly = new AtomicReference<>();
        final AtomicReference<DatRegistry> registry = new AtomicReference<>();
        final AtomicReference<Throwable> lastFailure = new AtomicReference<>();
        volatile boolean stop;

        @Override
        public void run() {
            try {
                consume();
            } catch (Throwable t) {
                lastFailure.set(t);
                java.io.StringWriter w = new java.io.StringWriter();
                t.printStackTrace(new java.io.PrintWriter(w));
                anomaly("the consumer died: " + w);
            }
        }

        private void consume() {
            while (!stop) {
                ConnectedPair pair;
                try {
                    pair = ConnectedPair.open(registry.get(), "emu0");
                } catch (DatException | AssertionError e) {
                    lastFailure.set(e);
                    sleep(10); // the provider is away
                    continue;
                }
                reopens.incrementAndGet();
                try (pair) {
                    stream(pair);
                } catch (RuntimeException e) {
                    lastFailure.set(e); // a DatException, or the arena or IA went away under a post
                    breaks.incrementAndGet();
                }
            }
        }

        /** Sends counted messages active to passive; each receive must hold its count, each cookie complete once. */
        private void stream(ConnectedPair pair) {
            MemorySegment out = pair.active.lmr.segment();
            MemorySegment in = pair.passive.lmr.segment();
            long expectedRecv = 2;  // ConnectedPair posted receive cookie 2 on the passive side
            for (long n = 1000; !stop; n++) {
                out.set(ValueLayout.JAVA_LONG_UNALIGNED, 2048, n);
                pair.active.ep.postSend(List.of(new LmrTriplet(pair.active.lmr, 2048, MESSAGE)), n,
                        Dat.COMPLETION_DEFAULT);
                boolean sent = false;
                boolean received = false;
                while (!sent || !received) {
                    DatEvent e = (sent ? pair.passive.recvEvd : pair.active.recvEvd).waitEvent(
                            TimeUnit.SECONDS.toMicros(20));
                    if (!(e instanceof DatEvent.DtoCompletion c)) {
                        anomaly("an event other than a completion: " + e);
                        return;
                    }
                    if (c.status() == DtoStatus.FLUSHED) {
                        throw new DatException(org.jdapl.dat.DatReturnType.ABORT, "flushed");
                    }
                    if (c.status() != DtoStatus.SUCCESS) {
                        anomaly("completion " + c.status());
                        return;
                    }
                    if (c.operation() == DtoOperation.SEND) {
                        if (c.cookie() != n || sent) {
                            anomaly("send completion for cookie " + c.cookie() + ", expected " + n);
                        }
                        sent = true;
                    } else if (c.operation() == DtoOperation.RECEIVE && c.ep() == pair.passive.ep) {
                        if (c.cookie() != expectedRecv || in.get(ValueLayout.JAVA_LONG_UNALIGNED, 0) != n
                                || c.transferredLength() != MESSAGE) {
                            anomaly("receive cookie " + c.cookie() + " holding " + in.get(ValueLayout.JAVA_LONG_UNALIGNED, 0)
                                    + ", expected cookie " + expectedRecv + " holding " + n);
                        }
                        received = true;
                    } else {
                        anomaly("unexpected completion " + c);
                    }
                }
                expectedRecv = n;
                pair.passive.ep.postRecv(List.of(new LmrTriplet(pair.passive.lmr, 0, 1024)), n, Dat.COMPLETION_DEFAULT);
                completed.incrementAndGet();
            }
        }

        private void anomaly(String what) {
            anomalies.incrementAndGet();
            firstAnomaly.compareAndSet(null, what);
        }
    }

    @Test
    public void REG_06_aHundredProviderCyclesUnderAStreamingConsumerLeaveNothingBehind() throws Exception {
        int cycles = Integer.getInteger("jdapl.itest.cycles", 100);
        Bundle emuBundle = installedBundle(EMU_BSN);
        Consumer consumer = new Consumer();
        consumer.registry.set(awaitService(DatRegistry.class, null));
        // Warm up what the JVM creates once (SecureRandom, the fork-join pool), then the baseline.
        try (ConnectedPair warm = ConnectedPair.open(consumer.registry.get(), "emu0")) {
            assertTrue(warm.active.ia.query() != null);
        }
        System.gc();
        Set<Thread> baseline = liveThreads();
        int baselineFds = fds();
        long baselineDirect = direct();

        Thread streaming = Thread.ofPlatform().name("itest-streaming-consumer").start(consumer);
        List<WeakReference<ClassLoader>> oldLoaders = new ArrayList<>();
        long start = System.nanoTime();
        try {
            for (int i = 0; i < cycles; i++) {
                long before = consumer.completed.get();
                long breaks = consumer.breaks.get();
                awaitStreaming(consumer, streaming, before, "before cycle " + i);
                if (i % 2 == 0) {
                    emuBundle.stop();
                    emuBundle.start();
                } else {
                    oldLoaders.add(new WeakReference<>(emuBundle.adapt(BundleWiring.class).getClassLoader()));
                    emuBundle.update();
                    refresh(emuBundle);
                }
                await("the consumer's IAs broke in cycle " + i, () -> consumer.breaks.get() > breaks);
                assertEquals(consumer.firstAnomaly.get(), 0, consumer.anomalies.get());
            }
            long last = consumer.completed.get();
            awaitStreaming(consumer, streaming, last, "after the last cycle");
        } finally {
            consumer.stop = true;
            streaming.join(TimeUnit.SECONDS.toMillis(30));
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        assertEquals(consumer.firstAnomaly.get(), 0, consumer.anomalies.get());
        assertTrue("every cycle broke the consumer's IAs: " + consumer.breaks.get(), consumer.breaks.get() >= cycles);
        assertTrue("the consumer reopened after every cycle", consumer.reopens.get() >= cycles + 1);

        ServiceReference<DatProvider> ref = context.getServiceReferences(DatProvider.class, "(dat.provider=emu)")
                .iterator().next();
        ContainerIT.assertAllZero(context.getService(ref).openObjects());
        context.ungetService(ref);

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        int collected;
        Set<String> extraThreads;
        int nowFds;
        long nowDirect;
        do {
            System.gc();
            Thread.sleep(100);
            collected = (int) oldLoaders.stream().filter(w -> w.get() == null).count();
            extraThreads = liveThreads().stream().filter(t -> !baseline.contains(t)).map(Thread::getName)
                    .collect(Collectors.toSet());
            nowFds = fds();
            nowDirect = direct();
        } while ((collected < oldLoaders.size() || !extraThreads.isEmpty() || nowFds > baselineFds
                || nowDirect > baselineDirect) && System.nanoTime() < deadline);
        String report = String.format(Locale.ROOT, "provider cycles: %d in %.1f s; consumer: %d messages, %d breaks, "
                        + "%d reopens, %d anomalies; old revisions' class loaders collected %d of %d; threads %d -> %d;"
                        + " fds %d -> %d; direct %d -> %d%n", cycles, seconds, consumer.completed.get(),
                consumer.breaks.get(), consumer.reopens.get(), consumer.anomalies.get(), collected, oldLoaders.size(),
                baseline.size(), liveThreads().size(), baselineFds, nowFds, baselineDirect, nowDirect);
        Files.writeString(targetDirectory("soak").resolve("provider-cycles.txt"), report);
        System.out.print(report);
        assertTrue("threads left behind: " + extraThreads + "\n" + report, extraThreads.isEmpty());
        assertTrue("file descriptors left behind\n" + report, nowFds <= baselineFds);
        assertTrue("direct memory left behind\n" + report, nowDirect <= baselineDirect);
        assertEquals("old revisions' class loaders still reachable\n" + report, oldLoaders.size(), collected);
    }

    private void awaitStreaming(Consumer consumer, Thread streaming, long before, String when) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (consumer.completed.get() <= before + 10) {
            if (System.nanoTime() > deadline) {
                StringBuilder stack = new StringBuilder();
                for (StackTraceElement e : streaming.getStackTrace()) {
                    stack.append("\n    at ").append(e);
                }
                Throwable last = consumer.lastFailure.get();
                throw new AssertionError("the consumer does not stream " + when + " (" + consumer.completed.get()
                        + " messages, " + consumer.breaks.get() + " breaks, " + consumer.reopens.get()
                        + " reopens; last failure " + last + "); providers: " + describeServices(DatProvider.class)
                        + "; emu bundle state " + installedBundle(EMU_BSN).getState() + "; registry entries "
                        + consumer.registry.get().entries() + stack);
            }
            sleep(5);
        }
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

    private static Set<Thread> liveThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
                .filter(t -> !t.getName().startsWith("ForkJoinPool.commonPool-worker"))
                .collect(Collectors.toSet());
    }

    private static int fds() {
        String[] fds = new File("/proc/self/fd").list();
        return fds == null ? -1 : fds.length;
    }

    private static long direct() {
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {
                return pool.getMemoryUsed();
            }
        }
        return 0;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
