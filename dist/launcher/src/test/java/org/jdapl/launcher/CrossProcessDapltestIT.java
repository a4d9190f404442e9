package org.jdapl.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
 * dapltest as operators run it, across processes over the emulated provider's tcp fabric: a server
 * JVM ({@code dapltest -T S}) serves two client JVMs at once: one runs every functional feature
 * ({@code -T F}), the performance test ({@code -T P}) blocking and polling and a transaction test
 * through the shell's {@code dat:dapltest}, the other a validated transaction test with two threads
 * of two endpoint pairs. A third client stops the server with {@code -T Q}; the server then reports
 * every session passed and closes its IA gracefully (nothing of any session left behind). The limit
 * test ({@code -T L}) runs in a JVM of its own and ends with a graceful close as well.
 */
class CrossProcessDapltestIT {
    private static final Duration RUN = Duration.ofSeconds(180);
    private static final Pattern LISTENING = Pattern.compile("listening at \\S*?/?(127\\.0\\.0\\.1):(\\d+), conn_qual");

    @TempDir
    Path work;

    @Test
    void everyModeAcrossProcessesOverTheTcpFabricUntilQuit() throws Exception {
        Path conf = work.resolve("dat.conf");
        Files.writeString(conf, "emu-tcp u2.0 threadsafe default emu dapl.2.0 \"tcp 127.0.0.1:0\" \"\"\n");
        Map<String, String> env = Map.of("DAT_OVERRIDE", conf.toString());

        List<String> serverCommand = Application.javaCommand();
        serverCommand.addAll(List.of("dapltest", "-T", "S", "-D", "emu-tcp"));
        try (Application.Running server = Application.start(serverCommand, env, work, null)) {
            String s = "127.0.0.1:" + awaitPort(server);
            StringBuilder script = new StringBuilder();
            for (String feature : List.of("hwconn", "cqmgt", "endpoint", "pz", "mem", "connmgt", "queryinfo", "dataxfer",
                    "dataxfer_client", "ns")) {
                script.append("dat:dapltest -T F -s ").append(s).append(" -D emu-tcp -f ").append(feature).append('\n');
            }
            script.append("dat:dapltest -T P -s ").append(s).append(" -D emu-tcp -i 2000 -m b RW 65536 2\n");
            script.append("dat:dapltest -T P -s ").append(s).append(" -D emu-tcp -i 2000 -m p RR 4096\n");
            script.append("dat:dapltest -T P -s ").append(s).append(" -D emu-tcp -i 2000 -p 4 -m p SR 1024\n");
            script.append("dat:dapltest -T T -s ").append(s).append(" -D emu-tcp -i 20 client SR 512 server RW 8192 4\n");
            List<String> shell = Application.javaCommand();
            List<String> transaction = Application.javaCommand();
            transaction.addAll(List.of("dapltest", "-T", "T", "-s", s, "-D", "emu-tcp", "-V", "-t", "2", "-w", "2", "-i",
                    "50", "client", "SR", "256", "server", "SR", "256", "client", "RW", "4096", "2", "client", "RR", "4096",
                    "server", "RR", "1000", "3"));
            try (Application.Running features = Application.start(shell, env, work, script.toString());
                 Application.Running t = Application.start(transaction, env, work, null)) {
                Application.Result tr = t.await(RUN);
                assertEquals(0, tr.status(), tr::toString);
                assertTrue(tr.out().contains("dapltest: PASSED (data validated), the server's side too"), tr::toString);
                assertTrue(Pattern.compile("(?m)^total +1000 ").matcher(tr.out()).find(), tr::toString);

                Application.Result fr = features.await(RUN);
                assertEquals(0, fr.status(), fr::toString);
                String out = fr.out();
                assertFalse(out.contains("Result: FAIL"), fr::toString);
                assertEquals(14, count(out, "dapltest: PASSED"), fr::toString);
                for (String summary : List.of("hwconn: 4 case(s): 4 passed", "cqmgt: 5 case(s): 5 passed",
                        "endpoint: 3 case(s): 3 passed", "pz: 3 case(s): 3 passed", "mem: 5 case(s): 5 passed",
                        "connmgt: 2 case(s): 2 passed", "queryinfo: 18 case(s): 14 passed, 0 failed, 4 do not apply",
                        "dataxfer: 4 case(s): 4 passed", "dataxfer_client: 1 case(s): 1 passed", "ns: 2 case(s): 2 passed")) {
                    assertTrue(out.contains("dapltest -T F " + summary), summary + "\n" + fr);
                }
                assertTrue(Pattern.compile("(?m)^client RW 65536 2 +2000 .* MB/s$").matcher(out).find(), fr::toString);
                assertTrue(out.contains("polling (-m p)"), fr::toString);
                assertTrue(Pattern.compile("(?m)^client SR 1024 +2000 ").matcher(out).find(), fr::toString);
                assertTrue(Pattern.compile("(?m)^total +40 ").matcher(out).find(), fr::toString);
            }

            Application.Result quit = Application.run(work, env, RUN, "dapltest", "-T", "Q", "-s", s, "-D", "emu-tcp");
            assertEquals(0, quit.status(), quit::toString);
            Application.Result served = server.await(RUN);
            assertEquals(0, served.status(), served::toString);
            // 10 features (one connection: dataxfer_client), 3 -T P, 2 -T T, 1 -T Q
            assertTrue(served.out().contains("stopped by -T Q after 7 session(s), 7 passed, 0 failed; every object freed"),
                    served::toString);
        }

        Application.Result limits = Application.run(work, env, RUN, "dapltest", "-T", "L", "-D", "emu-tcp", "-m", "100",
                "-w", "2");
        assertEquals(0, limits.status(), limits::toString);
        assertTrue(Pattern.compile("(?m)^PZ +100 +maximum 100 ").matcher(limits.out()).find(), limits::toString);
        assertTrue(limits.out().contains("every object freed, the IA closed gracefully"), limits::toString);
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    private static String awaitPort(Application.Running server) throws Exception {
        long deadline = System.nanoTime() + RUN.toNanos();
        while (System.nanoTime() < deadline) {
            Matcher m = LISTENING.matcher(server.out());
            if (m.find()) {
                return m.group(2);
            }
            if (!server.process.isAlive()) {
                fail("the dapltest server ended before it listened:\n--- stdout\n" + server.out() + "--- stderr\n"
                        + server.err());
            }
            Thread.sleep(100);
        }
        fail("the dapltest server did not listen within " + RUN + ":\n" + server.out() + server.err());
        return null;
    }
}
