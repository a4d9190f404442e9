package org.jdapl.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * dtest across two processes: a server JVM ({@code dtest -s}) and a client JVM
 * ({@code dtest -h 127.0.0.1:PORT}) over the emulated provider's tcp fabric, both on an IA of a
 * dat.conf line {@code emu-tcp ... "tcp 127.0.0.1:0"} (an ephemeral port on loopback).
 */
class CrossProcessDtestIT {
    private static final Duration RUN = Duration.ofSeconds(120);
    private static final Pattern LISTENING = Pattern.compile("listening at \\S*?/?(127\\.0\\.0\\.1):(\\d+), conn_qual");

    @TempDir
    Path work;

    @Test
    void dtestAcrossTwoProcessesOverTheTcpFabric() throws Exception {
        Path conf = work.resolve("dat.conf");
        Files.writeString(conf, "emu-tcp u2.0 threadsafe default emu dapl.2.0 \"tcp 127.0.0.1:0\" \"\"\n");
        Map<String, String> env = Map.of("DAT_OVERRIDE", conf.toString());

        Application.Result listing = Application.run(work, env, RUN, "providers");
        assertEquals(0, listing.status(), listing::toString);
        Matcher entry = Pattern.compile("(?m)^emu-tcp .*$").matcher(listing.out());
        assertTrue(entry.find(), listing::toString);
        assertTrue(entry.group().contains("OPENABLE"), "the tcp-fabric IA is not openable: " + entry.group());

        List<String> server = Application.javaCommand();
        server.addAll(List.of("dtest", "-s", "-P", "emu-tcp", "-W", "60"));
        try (Application.Running s = Application.start(server, env, work, null)) {
            String port = awaitPort(s);
            Application.Result client = Application.run(work, env, RUN,
                    "dtest", "-h", "127.0.0.1:" + port, "-P", "emu-tcp", "-B", "50", "-b", "64k", "-V");
            assertEquals(0, client.status(), client::toString);
            assertTrue(client.out().contains("dtest: PASSED (data validated)"), client::toString);
            assertTrue(Pattern.compile("(?m)^RDMA write \\(64 KiB\\) +50 .* MB/s$").matcher(client.out()).find(),
                    client::toString);
            assertTrue(Pattern.compile("(?m)^message round trip \\(64 B\\) +50 ").matcher(client.out()).find(),
                    client::toString);
            Application.Result served = s.await(RUN);
            assertEquals(0, served.status(), served::toString);
            assertTrue(served.out().contains("dtest server: served a client (buffer 64 KiB, burst 50"), served::toString);
            assertTrue(served.out().contains("dtest: PASSED (server)"), served::toString);
        }
    }

    private static String awaitPort(Application.Running server) throws Exception {
        long deadline = System.nanoTime() + RUN.toNanos();
        while (System.nanoTime() < deadline) {
            Matcher m = LISTENING.matcher(server.out());
            if (m.find()) {
                return m.group(2);
            }
            if (!server.process.isAlive()) {
                fail("the dtest server ended before it listened:\n--- stdout\n" + server.out() + "--- stderr\n" + server.err());
            }
            Thread.sleep(100);
        }
        fail("the dtest server did not listen within " + RUN + ":\n" + server.out() + server.err());
        return null;
    }
}
