package org.jdapl.provider.ofi.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.provider.emu.EmuProvider;
import org.jdapl.provider.ofi.OfiProvider;
import org.jdapl.provider.ofi.OfiShmRegions;

/**
 * An IA in this JVM connected to one in a peer JVM ({@link BenchPeer}, started with this JVM's class
 * path, under {@code taskset -c serverCpu} when that is not negative): the pinging and writing side
 * here, the ponging side there; the RDMA Writes go to the region the peer named in its accept's
 * private data. {@link #close} disconnects gracefully, which ends the peer; a peer that has not ended
 * 30 s later is killed, and the shm regions of a killed peer are removed.
 */
final class TwoJvmPair implements BenchPair {
    private static final long LINE_SECONDS = 60;

    private final DatProvider provider;
    private final Arena arena = Arena.ofShared();
    private final Process peer;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private InterfaceAdapter ia;
    private DatPair.Side side;
    private RmrTriplet target;

    TwoJvmPair(String name, String iaParams, int size, int serverCpu) {
        this(name, iaParams, size, serverCpu, false);
    }

    /** With {@code emu}, the IAs are the emulated provider's ({@code iaParams} such as {@code tcp 127.0.0.1:0}). */
    TwoJvmPair(String name, String iaParams, int size, int serverCpu, boolean emu) {
        provider = emu ? new EmuProvider() : new OfiProvider();
        List<String> command = new ArrayList<>();
        if (serverCpu >= 0) {
            command.addAll(List.of("taskset", "-c", Integer.toString(serverCpu)));
        }
        command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                BenchPeer.class.getName(), iaParams, Integer.toString(size), emu ? "emu" : "ofi"));
        try {
            peer = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread.ofPlatform().daemon().name("bench-peer-out").start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(peer.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null;) {
                    lines.add(l);
                }
            } catch (IOException e) {
                // the peer ended
            }
        });
        try {
            String[] at = line("listening").split(" ");
            ia = provider.open(new IaSpec(name + "-a", iaParams, "", true, "bench"), 16);
            side = new DatPair.Side(ia, arena, size);
            side.ep.postRecv(side.recvIov, 0, Dat.COMPLETION_DEFAULT);
            side.ep.connect(new InetSocketAddress(InetAddress.getByName(at[1]), Integer.parseInt(at[2])),
                    Long.parseLong(at[3]), 30_000_000, new byte[0]);
            DatEvent up = side.conn.waitEvent(30_000_000);
            if (up.number() != EventNumber.CONNECTION_ESTABLISHED) {
                throw new IllegalStateException("expected CONNECTION_ESTABLISHED, got " + up);
            }
            ByteBuffer pd = ByteBuffer.wrap(((DatEvent.Connection) up).privateData());
            target = new RmrTriplet(pd.getInt(), pd.getLong(), size);
        } catch (IOException e) {
            close();
            throw new UncheckedIOException(e);
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    @Override
    public SocketAddress address() {
        return ia.query().attributes().address();
    }

    @Override
    public double pingPong(int n) {
        if (n == 0) {
            return 0;
        }
        long t0 = System.nanoTime();
        DatPair.ping(side, n, true);
        return (System.nanoTime() - t0) / 1000.0 / n / 2;
    }

    /**
     * The RDMA Writes, with the peer polling its EVDs meanwhile (a message whose first byte is
     * {@link BenchPeer#HOLD} before them, one without after): on shm the target's progress copies each
     * write (cross-memory attach), and fi_pingpong's server polls its CQ throughout its rounds too.
     */
    @Override
    public double writeBandwidth(int n) {
        side.mem.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, BenchPeer.HOLD);
        DatPair.ping(side, 1, true);
        side.mem.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte) 0);
        try {
            return DatPair.writeBandwidth(side, target, n);
        } finally {
            DatPair.ping(side, 1, true);
        }
    }

    /** The peer's next line that starts with {@code prefix}, within {@value #LINE_SECONDS} s. */
    private String line(String prefix) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(LINE_SECONDS);
        try {
            for (long left; (left = end - System.nanoTime()) > 0;) {
                String l = lines.poll(Math.min(left, TimeUnit.MILLISECONDS.toNanos(200)), TimeUnit.NANOSECONDS);
                if (l != null && l.startsWith(prefix)) {
                    return l;
                }
                if (l == null && !peer.isAlive() && lines.isEmpty()) {
                    throw new IllegalStateException("the bench peer JVM ended (exit " + peer.exitValue() + ") before '"
                            + prefix + "'");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        throw new IllegalStateException("the bench peer JVM did not say '" + prefix + "' within " + LINE_SECONDS + " s");
    }

    @Override
    public void close() {
        try {
            if (side != null) {
                side.ep.disconnect(CloseFlag.GRACEFUL);
                side.conn.waitEvent(10_000_000);
            }
        } catch (RuntimeException e) {
            System.err.println("ofi-bench: disconnect: " + e);
        } finally {
            try {
                if (ia != null) {
                    ia.close();
                }
            } finally {
                arena.close();
                BenchPeer.deactivate(provider);
                stopPeer();
            }
        }
    }

    private void stopPeer() {
        try {
            if (!peer.waitFor(30, TimeUnit.SECONDS)) {
                System.err.println("ofi-bench: the bench peer JVM did not end 30 s after the disconnect; killed");
                peer.destroyForcibly();
                peer.waitFor(10, TimeUnit.SECONDS);
                OfiShmRegions.remove(peer.pid());
            } else if (peer.exitValue() != 0) {
                System.err.println("ofi-bench: the bench peer JVM ended with exit " + peer.exitValue());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            peer.destroyForcibly();
        } catch (IOException e) {
            System.err.println("ofi-bench: " + e);
        }
    }
}
