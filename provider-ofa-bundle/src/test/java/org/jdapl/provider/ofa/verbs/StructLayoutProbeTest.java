package org.jdapl.provider.ofa.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compiles a C probe with gcc against the installed rdma-core headers and checks every struct size
 * and member offset of {@link Structs} against it. When the headers are missing it runs
 * scripts/rxe/install-host-packages.sh to install libibverbs-dev and librdmacm-dev; if that cannot
 * be done (not root) the test is skipped with the reason, never passed.
 */
class StructLayoutProbeTest {
    private static final Path VERBS_H = Path.of("/usr/include/infiniband/verbs.h");
    private static final Path RDMA_CMA_H = Path.of("/usr/include/rdma/rdma_cma.h");

    @TempDir
    Path dir;

    @Test
    void everyOffsetAndSizeMatchesTheInstalledHeaders() throws Exception {
        ensureHeaders();
        Path src = dir.resolve("probe.c");
        Files.writeString(src, probeSource(), StandardCharsets.UTF_8);
        Path exe = dir.resolve("probe");
        Result cc = run(List.of("gcc", "-O0", "-o", exe.toString(), src.toString()), 120);
        assertEquals(0, cc.exit(), () -> "gcc failed:\n" + cc.output());
        Result p = run(List.of(exe.toString()), 30);
        assertEquals(0, p.exit());
        Map<String, Long> c = new HashMap<>();
        for (String line : p.output().split("\n")) {
            int space = line.trim().lastIndexOf(' ');
            if (space > 0) {
                c.put(line.trim().substring(0, space), Long.parseLong(line.trim().substring(space + 1)));
            }
        }
        List<String> wrong = new ArrayList<>();
        int checked = 0;
        for (CStruct s : Structs.ALL) {
            checked += compare(c, "sizeof " + s.name(), s.size(), wrong);
            for (CField f : s.fields()) {
                checked += compare(c, s.name() + "." + f.member(), f.offset(), wrong);
                if (f.kind().size() > 0) {
                    checked += compare(c, "sizeof " + s.name() + "." + f.member(), f.kind().size(), wrong);
                }
            }
        }
        assertTrue(wrong.isEmpty(), "layouts differ from the headers:\n" + String.join("\n", wrong));
        assertTrue(checked > 150, "only " + checked + " numbers checked");
        System.out.println("struct layout probe: " + checked + " sizes and offsets match the rdma-core headers");
    }

    private static int compare(Map<String, Long> c, String key, long java, List<String> wrong) {
        Long value = c.get(key);
        if (value == null) {
            wrong.add(key + ": the probe printed nothing");
        } else if (value != java) {
            wrong.add(key + ": C " + value + ", Java " + java);
        }
        return 1;
    }

    private static String probeSource() {
        StringBuilder b = new StringBuilder("""
                #include <stdio.h>
                #include <stddef.h>
                #include <poll.h>
                #include <netinet/in.h>
                #include <infiniband/verbs.h>
                #include <rdma/rdma_cma.h>
                int main(void) {
                """);
        for (CStruct s : Structs.ALL) {
            b.append("  printf(\"%s %zu\\n\", \"sizeof ").append(s.name()).append("\", sizeof(struct ")
                    .append(s.name()).append("));\n");
            for (CField f : s.fields()) {
                String key = s.name() + "." + f.member();
                b.append("  printf(\"%s %zu\\n\", \"").append(key).append("\", offsetof(struct ")
                        .append(s.name()).append(", ").append(f.member()).append("));\n");
                b.append("  printf(\"%s %zu\\n\", \"sizeof ").append(key).append("\", sizeof(((struct ")
                        .append(s.name()).append(" *)0)->").append(f.member()).append("));\n");
            }
        }
        return b.append("  return 0;\n}\n").toString();
    }

    private static void ensureHeaders() throws Exception {
        if (Files.exists(VERBS_H) && Files.exists(RDMA_CMA_H) && onPath("gcc")) {
            return;
        }
        Path script = repositoryRoot().resolve("scripts/rxe/install-host-packages.sh");
        assumeTrue(Files.isExecutable(script), "no " + script + " to install the rdma-core headers");
        Result p = run(List.of("bash", script.toString(), "headers"), 900);
        assumeTrue(p.exit() == 0 && Files.exists(VERBS_H) && Files.exists(RDMA_CMA_H),
                "the rdma-core headers (libibverbs-dev, librdmacm-dev) are missing and could not be installed: "
                        + p.output().strip());
    }

    private static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }

    private static Path repositoryRoot() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("scripts/rxe"))) {
            p = p.getParent();
        }
        return p == null ? Path.of("..").toAbsolutePath() : p;
    }

    private record Result(int exit, String output) {
    }

    private static Result run(List<String> cmd, int seconds) throws IOException, InterruptedException {
        Path out = Files.createTempFile("probe", ".out");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError(cmd + " did not finish within " + seconds + " s");
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
