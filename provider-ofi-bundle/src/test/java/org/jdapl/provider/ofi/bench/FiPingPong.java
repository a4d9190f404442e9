package org.jdapl.provider.ofi.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * libfabric's own ping-pong, {@code fi_pingpong -p <provider> -e <endpoint> [-d <domain>]} (libfabric-bin), as
 * two processes, the baseline of {@link OfiPingPongBench}: the server listens for its control
 * connection on {@code port}, the client reaches it at {@code address}, as fabtests run it. When
 * {@code clientCpu} and {@code serverCpu} are not negative, each process is bound to its CPU with
 * {@code taskset -c}, as the DAT ping-pong binds its threads. The figures are the client's; when
 * the server has printed its own and the client does not end {@value #GRACE_SECONDS} s later (a
 * client stuck at its end after every transfer, seen on the emulated guest), the server's. Every
 * wait is bounded; a failure throws with what both processes printed.
 *
 * @param provider the libfabric provider ({@code tcp}, {@code verbs}, {@code shm})
 * @param endpoint the endpoint type ({@code msg}, {@code rdm})
 * @param domain its domain ({@code lo}, {@code rxe0}), or null for the provider's first
 * @param address the server's address as the client reaches it
 * @param clientCpu the client's CPU, or -1
 * @param serverCpu the server's CPU, or -1
 */
record FiPingPong(String provider, String endpoint, String domain, String address, int clientCpu, int serverCpu) {
    private static final long CLIENT_SECONDS = 300;
    private static final long LISTEN_SECONDS = 60;
    private static final long GRACE_SECONDS = 20;

    /**
     * One run at {@code size} bytes: fi_pingpong's MB/sec (10^6 bytes per second) and usec/xfer (the
     * half round trip).
     */
    double[] run(int size, int iterations, int port) throws IOException, InterruptedException {
        List<String> common = new ArrayList<>(List.of("fi_pingpong", "-p", provider, "-e", endpoint));
        if (domain != null) {
            common.addAll(List.of("-d", domain));
        }
        common.addAll(List.of("-S", Integer.toString(size), "-I", Integer.toString(iterations)));
        List<String> server = new ArrayList<>(bound(serverCpu));
        server.addAll(common);
        server.addAll(List.of("-B", Integer.toString(port)));
        List<String> client = new ArrayList<>(bound(clientCpu));
        client.addAll(common);
        client.addAll(List.of("-P", Integer.toString(port), address));
        Path sout = Files.createTempFile("fi_pingpong", ".server");
        Path cout = Files.createTempFile("fi_pingpong", ".client");
        Process s = new ProcessBuilder(server).redirectErrorStream(true).redirectOutput(sout.toFile()).start();
        Process c = null;
        try {
            awaitListener(s, port, sout); // the client's control connect does not retry
            c = new ProcessBuilder(client).redirectErrorStream(true).redirectOutput(cout.toFile()).start();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(CLIENT_SECONDS);
            while (!c.waitFor(1, TimeUnit.SECONDS)) {
                double[] served = result(size, Files.readString(sout));
                if (served != null && !c.waitFor(GRACE_SECONDS, TimeUnit.SECONDS)) {
                    // Seen in the Soft-RoCE guest: the server done, the client stuck at its end.
                    System.err.println("fi_pingpong: the client did not end " + GRACE_SECONDS
                            + " s after its server's figures; the server's count");
                    return served;
                }
                if (System.nanoTime() > end) {
                    throw failed(size, "client still running after " + CLIENT_SECONDS + " s", client, cout, sout);
                }
            }
            if (c.exitValue() != 0) {
                throw failed(size, "client exit " + c.exitValue(), client, cout, sout);
            }
            double[] r = result(size, Files.readString(cout));
            if (r == null) {
                throw failed(size, "no result line", client, cout, sout);
            }
            return r;
        } finally {
            if (c != null) {
                c.destroyForcibly();
            }
            s.waitFor(10, TimeUnit.SECONDS);
            s.destroyForcibly();
            s.waitFor(10, TimeUnit.SECONDS);
            Files.deleteIfExists(sout);
            Files.deleteIfExists(cout);
        }
    }

    /** The MB/sec and usec/xfer of the result line for {@code size} in fi_pingpong's output, or null. */
    private static double[] result(int size, String out) {
        String label = size >= 1 << 20 ? (size >> 20) + "m" : size >= 1 << 10 ? (size >> 10) + "k"
                : Integer.toString(size);
        for (String line : out.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 8 && f[0].equals(label)) {
                return new double[] {Double.parseDouble(f[5]), Double.parseDouble(f[6])};
            }
        }
        return null;
    }

    private static IllegalStateException failed(int size, String why, List<String> client, Path cout, Path sout)
            throws IOException {
        return new IllegalStateException("fi_pingpong at " + size + " B failed (" + why + "): "
                + String.join(" ", client) + "\n--- client:\n" + Files.readString(cout) + "--- server:\n"
                + Files.readString(sout));
    }

    /**
     * Waits until the server listens on its control port ({@code /proc/net/tcp}: an emulated guest
     * takes seconds to start libfabric), at most {@value #LISTEN_SECONDS} s; elsewhere than on Linux
     * one second.
     */
    private static void awaitListener(Process server, int port, Path sout) throws IOException, InterruptedException {
        Path table = Path.of("/proc/net/tcp");
        if (!Files.isReadable(table)) {
            Thread.sleep(1000);
            return;
        }
        String local = String.format(":%04X ", port);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(LISTEN_SECONDS);
        while (System.nanoTime() < end) {
            for (String line : Files.readAllLines(table)) {
                String[] f = line.trim().split("\\s+");
                if (f.length > 3 && (f[1] + " ").endsWith(local) && f[3].equals("0A")) {
                    return;
                }
            }
            if (!server.isAlive()) {
                throw new IllegalStateException("fi_pingpong's server ended (exit " + server.exitValue() + "):\n"
                        + Files.readString(sout));
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("fi_pingpong's server did not listen on port " + port + " within "
                + LISTEN_SECONDS + " s:\n" + Files.readString(sout));
    }

    private static List<String> bound(int cpu) {
        return cpu < 0 ? List.of() : List.of("taskset", "-c", Integer.toString(cpu));
    }
}
