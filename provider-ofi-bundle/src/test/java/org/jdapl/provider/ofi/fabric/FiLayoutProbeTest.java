package org.jdapl.provider.ofi.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jdapl.provider.ofi.OfiHost;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compiles a C probe with gcc against the installed libfabric headers ({@code rdma/fabric.h} and the
 * fi_*.h beside it, built with {@code FI_VERSION(1,17)}) and checks every struct size and member
 * offset of {@link FiLayouts}. Missing headers are installed with scripts/ofi/install-host-packages.sh;
 * if that cannot be done the test is skipped with the reason, never passed.
 */
class FiLayoutProbeTest {
    @TempDir
    Path dir;

    @Test
    void everyOffsetAndSizeMatchesTheInstalledHeaders() throws Exception {
        String missing = OfiHost.ensure("headers");
        assumeTrue(missing == null, missing);
        Path src = dir.resolve("probe.c");
        Files.writeString(src, probeSource(), StandardCharsets.UTF_8);
        Path exe = dir.resolve("probe");
        OfiHost.Result cc = OfiHost.run(List.of("gcc", "-O0", "-o", exe.toString(), src.toString()), 120);
        assertEquals(0, cc.exit(), () -> "gcc failed:\n" + cc.output());
        OfiHost.Result p = OfiHost.run(List.of(exe.toString()), 30);
        assertEquals(0, p.exit());
        Map<String, Long> c = new HashMap<>();
        for (String line : p.output().split("\n")) {
            int space = line.trim().lastIndexOf(' ');
            if (space > 0) {
                c.put(line.trim().substring(0, space), Long.parseLong(line.trim().substring(space + 1)));
            }
        }
        assertEquals(Fi.API_VERSION, c.get("FI_VERSION(FI_MAJOR_VERSION,FI_MINOR_VERSION)"),
                "the installed headers are not libfabric 1.17");
        List<String> wrong = new ArrayList<>();
        int checked = 0;
        for (FiStruct s : FiLayouts.ALL) {
            checked += compare(c, "sizeof " + s.name(), s.size(), wrong);
            for (FiStruct.Field f : s.fields()) {
                checked += compare(c, s.name() + "." + f.member(), f.offset(), wrong);
                if (f.size() > 0) {
                    checked += compare(c, "sizeof " + s.name() + "." + f.member(), f.size(), wrong);
                }
            }
        }
        for (var k : CONSTANTS.entrySet()) {
            checked += compare(c, k.getKey(), k.getValue(), wrong);
        }
        assertTrue(wrong.isEmpty(), "layouts differ from the headers:\n" + String.join("\n", wrong));
        assertTrue(checked > 200, "only " + checked + " numbers checked");
        System.out.println("libfabric layout probe: " + checked + " sizes and offsets match the 1.17 headers");
    }

    /** The constants of the headers the binding uses (enum values and macros), by their C names. */
    private static final Map<String, Long> CONSTANTS = Map.ofEntries(
            Map.entry("FI_MSG", Fi.FI_MSG), Map.entry("FI_RMA", Fi.FI_RMA), Map.entry("FI_READ", Fi.FI_READ),
            Map.entry("FI_WRITE", Fi.FI_WRITE), Map.entry("FI_RECV", Fi.FI_RECV), Map.entry("FI_SEND", Fi.FI_SEND),
            Map.entry("FI_REMOTE_READ", Fi.FI_REMOTE_READ), Map.entry("FI_REMOTE_WRITE", Fi.FI_REMOTE_WRITE),
            Map.entry("FI_SOURCE", Fi.FI_SOURCE), Map.entry("FI_COMPLETION", Fi.FI_COMPLETION),
            Map.entry("FI_DELIVERY_COMPLETE", Fi.FI_DELIVERY_COMPLETE),
            Map.entry("FI_EP_MSG", (long) Fi.FI_EP_MSG), Map.entry("FI_SOCKADDR_IN", (long) Fi.FI_SOCKADDR_IN),
            Map.entry("FI_MR_LOCAL", (long) Fi.FI_MR_LOCAL), Map.entry("FI_MR_VIRT_ADDR", (long) Fi.FI_MR_VIRT_ADDR),
            Map.entry("FI_MR_ALLOCATED", (long) Fi.FI_MR_ALLOCATED),
            Map.entry("FI_MR_PROV_KEY", (long) Fi.FI_MR_PROV_KEY), Map.entry("FI_MR_ENDPOINT", (long) Fi.FI_MR_ENDPOINT),
            Map.entry("FI_THREAD_SAFE", (long) Fi.FI_THREAD_SAFE), Map.entry("FI_WAIT_NONE", (long) Fi.FI_WAIT_NONE),
            Map.entry("FI_WAIT_UNSPEC", (long) Fi.FI_WAIT_UNSPEC), Map.entry("FI_WAIT_FD", (long) Fi.FI_WAIT_FD),
            Map.entry("FI_CQ_FORMAT_DATA", (long) Fi.FI_CQ_FORMAT_DATA), Map.entry("FI_NOTIFY", (long) Fi.FI_NOTIFY),
            Map.entry("FI_CONNREQ", (long) Fi.FI_CONNREQ), Map.entry("FI_CONNECTED", (long) Fi.FI_CONNECTED),
            Map.entry("FI_SHUTDOWN", (long) Fi.FI_SHUTDOWN), Map.entry("FI_GETWAIT", (long) Fi.FI_GETWAIT),
            Map.entry("FI_ENABLE", (long) Fi.FI_ENABLE), Map.entry("FI_OPT_ENDPOINT", (long) Fi.FI_OPT_ENDPOINT),
            Map.entry("FI_OPT_CM_DATA_SIZE", (long) Fi.FI_OPT_CM_DATA_SIZE),
            Map.entry("FI_CLASS_EP", (long) Fi.FI_CLASS_EP), Map.entry("FI_CLASS_PEP", (long) Fi.FI_CLASS_PEP),
            Map.entry("FI_EAGAIN", (long) Fi.FI_EAGAIN), Map.entry("FI_EAVAIL", (long) Fi.FI_EAVAIL),
            Map.entry("FI_ECANCELED", (long) Fi.FI_ECANCELED));

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
                #include <sys/uio.h>
                #include <rdma/fabric.h>
                #include <rdma/fi_domain.h>
                #include <rdma/fi_endpoint.h>
                #include <rdma/fi_cm.h>
                #include <rdma/fi_eq.h>
                #include <rdma/fi_rma.h>
                int main(void) {
                  printf("%s %d\\n", "FI_VERSION(FI_MAJOR_VERSION,FI_MINOR_VERSION)", FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION));
                """);
        for (String k : CONSTANTS.keySet()) {
            b.append("  printf(\"%s %llu\\n\", \"").append(k).append("\", (unsigned long long) (").append(k).append("));\n");
        }
        for (FiStruct s : FiLayouts.ALL) {
            b.append("  printf(\"%s %zu\\n\", \"sizeof ").append(s.name()).append("\", sizeof(struct ")
                    .append(s.name()).append("));\n");
            for (FiStruct.Field f : s.fields()) {
                String key = s.name() + "." + f.member();
                b.append("  printf(\"%s %zu\\n\", \"").append(key).append("\", offsetof(struct ")
                        .append(s.name()).append(", ").append(f.member()).append("));\n");
                if (f.size() > 0) {
                    b.append("  printf(\"%s %zu\\n\", \"sizeof ").append(key).append("\", sizeof(((struct ")
                            .append(s.name()).append(" *)0)->").append(f.member()).append("));\n");
                }
            }
        }
        return b.append("  return 0;\n}\n").toString();
    }
}
