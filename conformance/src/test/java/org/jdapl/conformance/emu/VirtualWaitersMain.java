package org.jdapl.conformance.emu;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

import org.jdapl.conformance.WaiterRelease;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.emu.EmuProvider;

/**
 * The JVM {@link VirtualThreadWaitTest} starts (with few carriers): {@link WaiterRelease} on an IA of
 * the fabric named by the first argument, under a JFR recording of every
 * {@code jdk.VirtualThreadPinned}. Prints {@code pinned N}, the pinned stacks, and the figures.
 *
 * <p>A smaller run on an IA of its own comes first, outside the recording: it initializes the JDK's
 * classes on the wait path (the lock queue's nodes, the NIO poller). A virtual thread that meets such
 * a class while another thread runs its initializer waits pinned, once per JVM; that wait is the
 * JDK's, not the provider's, and the recording is about the provider's waits. For the same reason a
 * throwable is made on this platform thread once the recording has started: a running recording turns
 * on the JDK's throwable tracing, whose class a virtual thread would otherwise initialize, pinned, when
 * the close makes its first {@code DatException}.
 */
public final class VirtualWaitersMain {
    private VirtualWaitersMain() {
    }

    public static void main(String[] args) throws Exception {
        String params = args[0].equals("tcp") ? "tcp 127.0.0.1:0" : "loopback";
        int evdWaiters = Integer.parseInt(args[1]);
        int cnoWaiters = Integer.parseInt(args[2]);
        InterfaceAdapter warm = new EmuProvider().open(new IaSpec("vt-warm-" + args[0], params, "", true, "test"), 8);
        WaiterRelease.run(warm, 64, 4, Duration.ofSeconds(60));
        Path jfr = Files.createTempFile("jdapl-vt-", ".jfr");
        try (Recording recording = new Recording()) {
            recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
            recording.start();
            new Throwable("initializes the JDK's throwable tracer on a platform thread").fillInStackTrace();
            InterfaceAdapter ia = new EmuProvider().open(new IaSpec("vt-" + args[0], params, "", true, "test"), 8);
            WaiterRelease.Result r = WaiterRelease.run(ia, evdWaiters, cnoWaiters, Duration.ofSeconds(60));
            recording.stop();
            recording.dump(jfr);
            report(RecordingFile.readAllEvents(jfr), r);
        } finally {
            Files.deleteIfExists(jfr);
        }
    }

    /** Prints the pinned events (with their stacks), the figures and the counts the test reads. */
    static void report(List<RecordedEvent> events, WaiterRelease.Result r) {
        List<RecordedEvent> pinned = events.stream()
                .filter(e -> e.getEventType().getName().equals("jdk.VirtualThreadPinned")).toList();
        for (RecordedEvent e : pinned.subList(0, Math.min(5, pinned.size()))) {
            System.out.println("pinned event: " + e.getDuration() + " " + e.getString("pinnedReason"));
            if (e.getStackTrace() != null) {
                for (RecordedFrame f : e.getStackTrace().getFrames().subList(0,
                        Math.min(25, e.getStackTrace().getFrames().size()))) {
                    System.out.println("    at " + f.getMethod().getType().getName() + "." + f.getMethod().getName()
                            + " line " + f.getLineNumber());
                }
            }
        }
        System.out.println("carriers " + System.getProperty("jdk.virtualThreadScheduler.parallelism"));
        System.out.println(r.summary());
        System.out.println("pinned " + pinned.size());
        System.out.println("woken " + r.woken());
        System.out.println("released " + r.released());
        System.out.println("wrong " + r.wrong().size());
        System.out.println("max-latency-ns " + r.maxLatencyNanos());
        System.out.println("late " + (r.released() - r.releasedDuringClose()));
    }
}
