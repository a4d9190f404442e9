package org.jdapl.provider.ofi;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.jdapl.conformance.WaiterRelease;
import org.jdapl.dat.spi.IaSpec;

/**
 * The JVM {@link OfiVirtualThreadWaitTest} starts (with two carriers): {@link WaiterRelease} on an
 * ofi IA on libfabric's tcp over lo, under a JFR recording of every {@code jdk.VirtualThreadPinned},
 * after a smaller warm-up run on an IA of its own outside the recording (the JDK's classes on the wait
 * path initialized). Prints {@code pinned N}, the first pinned stacks and the counts the test reads.
 */
public final class OfiVirtualWaitersMain {
    private OfiVirtualWaitersMain() {
    }

    public static void main(String[] args) throws Exception {
        int evdWaiters = Integer.parseInt(args[0]);
        int cnoWaiters = Integer.parseInt(args[1]);
        OfiProvider provider = new OfiProvider();
        WaiterRelease.run(provider.open(new IaSpec("vt-warm", "tcp lo", "", true, "test"), 8), 32, 4,
                Duration.ofSeconds(60));
        Path jfr = Files.createTempFile("jdapl-ofi-vt-", ".jfr");
        try (Recording recording = new Recording()) {
            recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
            recording.start();
            // a running recording turns on the JDK's throwable tracing; its class is initialized here, on a
            // platform thread, not by the first waiter the close releases (that would pin, and is the JDK's)
            new Throwable("initializes the JDK's throwable tracer").fillInStackTrace();
            WaiterRelease.Result r = WaiterRelease.run(provider.open(new IaSpec("vt", "tcp lo", "", true, "test"), 8),
                    evdWaiters, cnoWaiters, Duration.ofSeconds(60));
            recording.stop();
            recording.dump(jfr);
            List<RecordedEvent> pinned = RecordingFile.readAllEvents(jfr).stream()
                    .filter(e -> e.getEventType().getName().equals("jdk.VirtualThreadPinned")).toList();
            for (RecordedEvent e : pinned.subList(0, Math.min(3, pinned.size()))) {
                System.out.println("pinned event: " + e.getString("pinnedReason") + " " + e.getStackTrace());
            }
            System.out.println(r.summary());
            System.out.println("pinned " + pinned.size());
            System.out.println("woken " + r.woken());
            System.out.println("released " + r.released());
            System.out.println("wrong " + r.wrong().size());
            r.wrong().forEach(w -> System.out.println("  " + w));
        } finally {
            Files.deleteIfExists(jfr);
            provider.deactivate();
        }
    }
}
