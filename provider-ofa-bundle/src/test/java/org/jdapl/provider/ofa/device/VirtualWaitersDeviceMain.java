package org.jdapl.provider.ofa.device;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

import org.jdapl.conformance.WaiterRelease;
import org.jdapl.provider.ofa.OfaProvider;

/**
 * The JVM {@link VirtualThreadWaitDeviceTest} starts (with few carriers): {@link WaiterRelease} on an
 * IA of the device, under a JFR recording of every {@code jdk.VirtualThreadPinned}. Prints
 * {@code pinned N}, the pinned stacks, and the figures.
 */
public final class VirtualWaitersDeviceMain {
    private VirtualWaitersDeviceMain() {
    }

    public static void main(String[] args) throws Exception {
        int evdWaiters = Integer.parseInt(args[0]);
        int cnoWaiters = Integer.parseInt(args[1]);
        Path jfr = Files.createTempFile("jdapl-vt-", ".jfr");
        try (Recording recording = new Recording()) {
            recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
            recording.start();
            // a running recording turns on the JDK's throwable tracing; its class is initialized here, on a
            // platform thread, not by the first waiter the close releases (that would pin, and is the JDK's)
            new Throwable("initializes the JDK's throwable tracer").fillInStackTrace();
            WaiterRelease.Result r = WaiterRelease.run(RxeDevice.open(new OfaProvider()), evdWaiters, cnoWaiters,
                    Duration.ofSeconds(120));
            recording.stop();
            recording.dump(jfr);
            List<RecordedEvent> pinned = RecordingFile.readAllEvents(jfr).stream()
                    .filter(e -> e.getEventType().getName().equals("jdk.VirtualThreadPinned")).toList();
            for (RecordedEvent e : pinned.subList(0, Math.min(5, pinned.size()))) {
                System.out.println("pinned event: " + e.getDuration() + " " + e.getString("pinnedReason"));
                List<RecordedFrame> frames = e.getStackTrace() == null ? List.of() : e.getStackTrace().getFrames();
                for (RecordedFrame f : frames.subList(0, Math.min(25, frames.size()))) {
                    System.out.println("    at " + f.getMethod().getType().getName() + "." + f.getMethod().getName()
                            + " line " + f.getLineNumber());
                }
            }
            System.out.println(r.summary());
            System.out.println("pinned " + pinned.size());
            System.out.println("woken " + r.woken());
            System.out.println("released " + r.released());
            System.out.println("wrong " + r.wrong().size());
        } finally {
            Files.deleteIfExists(jfr);
        }
    }
}
