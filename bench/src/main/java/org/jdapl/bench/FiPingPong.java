package org.jdapl.bench;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * libfabric's {@code fi_pingpong -p tcp -e msg} on loopback: a server and a client process, the
 * client's report parsed. {@code fi_pingpong} counts a ping and its pong as two transfers, so the
 * round trip is twice its {@code usec/xfer}.
 */
final class FiPingPong {
    private static final String TOOL = "fi_pingpong";

    private FiPingPong() {
    }

    /** Whether {@code fi_pingpong} is on the path. */
    static boolean available() {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (new File(dir, TOOL).canExecute()) {
                return true;
            }
        }
        return false;
    }

    /** Round-trip microseconds of {@code size}-byte messages, for about {@code nanos}. */
    static double rttMicros(int size, long nanos) throws IOException, InterruptedException {
        long perIteration = size >= 1 << 20 ? 1_000_000 : 50_000;
        int iterations = (int) Math.max(100, Math.min(1_000_000, nanos / perIteration));
        IOException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            int port = freePort();
            List<String> common = List.of(TOOL, "-p", "tcp", "-e", "msg", "-S", Integer.toString(size), "-I",
                    Integer.toString(iterations));
            List<String> server = new ArrayList<>(common);
            server.addAll(List.of("-B", Integer.toString(port)));
            Process s = new ProcessBuilder(server).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            try {
                Thread.sleep(200);
                List<String> client = new ArrayList<>(common);
                client.addAll(List.of("-P", Integer.toString(port), "127.0.0.1"));
                Process c = new ProcessBuilder(client).redirectErrorStream(true).start();
                List<String> lines = new ArrayList<>();
                try (BufferedReader r = new BufferedReader(new InputStreamReader(c.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        lines.add(line);
                    }
                }
                if (!c.waitFor(60, TimeUnit.SECONDS)) {
                    c.destroyForcibly();
                }
                for (String line : lines) {
                    String[] f = line.trim().split("\\s+");
                    // The result line: 8 columns, the usec/xfer one a number (an error line may have 8 words).
                    if (f.length == 8 && !f[0].equals("bytes") && f[6].matches("[0-9]+(\\.[0-9]+)?")) {
                        return 2 * Double.parseDouble(f[6]);
                    }
                }
                last = new IOException("fi_pingpong printed no result: " + lines);
            } finally {
                s.destroy();
                if (!s.waitFor(5, TimeUnit.SECONDS)) {
                    s.destroyForcibly();
                }
            }
        }
        throw last;
    }

    private static int freePort() throws IOException {
        try (ServerSocket probe = new ServerSocket()) {
            probe.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return probe.getLocalPort();
        }
    }
}
