package org.jdapl.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Consumer;
import org.jdapl.dat.DatRegistry;
import org.jdapl.tools.dapltest.Dapltest;
import org.jdapl.tools.dtest.Dtest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** dtest and dapltest in plain Java over the registry and the emulated provider's loopback fabric. */
@Timeout(120)
class ToolsOnEmulatedProviderTest {
    private final DatRegistry registry = DatRegistry.standalone();

    private static String capture(Consumer<PrintStream> run) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            run.accept(out);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void dtestSelfContainedWithValidation() {
        String out = capture(o -> new Dtest(registry, o).run(List.of("-B", "20", "-b", "8k", "-V")));
        assertTrue(out.contains("dtest: PASSED (data validated)"), out);
        assertTrue(out.contains("RDMA read (8 KiB)"), out);
    }

    @Test
    void dtestSpeaksOfedDtestsFlowBetweenItsOwnSides() {
        // -O: OFED dtest's private data (1..48 and back 2..49), RMR triplets, RDMA writes and reads both
        // ways (each side checks what the peer wrote) and the 100-message ping-pong.
        String out = capture(o -> new Dtest(registry, o).run(List.of("-O", "-b", "4k", "-B", "30", "-S", "7")));
        assertTrue(out.contains("dtest: PASSED (OFED dtest's wire)"), out);
        assertTrue(out.contains("dtest server: RDMA write buffer contains: client RDMA write data..."), out);
        assertTrue(out.contains("dtest client: RDMA write buffer contains: server RDMA write data..."), out);
        assertTrue(out.matches("(?s).*ping-pong latency \\(half round trip\\) +100 .*"), out);
    }

    @Test
    void dtestConnectOnlyAndServerTeardownCloseGracefully() {
        // Each side frees its objects and closes its IA with DAT_CLOSE_GRACEFUL, which fails on a leftover.
        String out = capture(o -> new Dtest(registry, o).run(List.of("-C")));
        assertTrue(out.matches("(?s).*\\nIA close +\\S+ \\S+ +1 +\\S+ \\S+ +1\\n.*"), out);
    }

    @Test
    void dtestOnAnUnknownIaFails() {
        ToolException e = assertThrows(ToolException.class,
                () -> capture(o -> new Dtest(registry, o).run(List.of("-P", "nowhere"))));
        assertEquals(ToolException.FAILURE, e.status());
        assertTrue(e.getMessage().contains("cannot open IA 'nowhere'"), e.getMessage());
    }

    @Test
    void dapltestTransactionAndPerformance() {
        String t = capture(o -> new Dapltest(registry, o).run(List.of("-T", "T", "-V", "-t", "3", "-w", "2", "-i", "30",
                "client", "SR", "100", "3", "server", "RW", "5000", "7", "client", "RR", "777")));
        assertTrue(t.contains("dapltest: PASSED (data validated)"), t);
        assertTrue(t.matches("(?s).*\\ntotal +540 .*"), t);
        String p = capture(o -> new Dapltest(registry, o).run(List.of("-T", "P", "-i", "500", "SR", "1024")));
        assertTrue(p.contains("dapltest: PASSED"), p);
    }

    @Test
    void dapltestRejectsOperationsOverTheIaLimits() {
        ToolException e = assertThrows(ToolException.class, () -> capture(o -> new Dapltest(registry, o)
                .run(List.of("-T", "T", "client", "SR", "4096", "1000"))));
        assertEquals(ToolException.USAGE, e.status());
        assertTrue(e.getMessage().contains("segments per DTO"), e.getMessage());
    }

    @Test
    void dapltestFunctionalFeaturesPassOrSayTheyDoNotApply() {
        for (String feature : List.of("hwconn", "cqmgt", "endpoint", "pz", "mem", "connmgt", "queryinfo", "dataxfer",
                "dataxfer_client", "ns")) {
            String out = capture(o -> new Dapltest(registry, o).run(List.of("-T", "F", "-f", feature)));
            assertTrue(out.contains("dapltest: PASSED"), out);
            assertTrue(out.contains("Function feature: "), out);
            assertTrue(!out.contains("Result: FAIL"), out);
        }
        String q = capture(o -> new Dapltest(registry, o).run(List.of("-T", "F", "-f", "queryinfo", "10", "11")));
        assertTrue(q.contains("2 case(s): 1 passed, 0 failed, 1 do not apply"), q);
        ToolException e = assertThrows(ToolException.class,
                () -> capture(o -> new Dapltest(registry, o).run(List.of("-T", "F", "-f", "pz", "3"))));
        assertEquals(ToolException.USAGE, e.status());
    }

    @Test
    void dapltestLimitsStopAtTheMaximumAndFreeEverything() {
        String out = capture(o -> new Dapltest(registry, o).run(List.of("-T", "L", "-m", "40", "-w", "2")));
        assertTrue(out.matches("(?s).*\\nEP +40 +maximum 40 .*"), out);
        assertTrue(out.contains("every object freed, the IA closed gracefully"), out);
        assertTrue(out.contains("run 2:"), out);
    }

    @Test
    void dapltestReportsAServerThatCannotBeReached() {
        long start = System.nanoTime();
        // An address of the loopback fabric where no IA is.
        ToolException e = assertThrows(ToolException.class, () -> capture(o -> new Dapltest(registry, o)
                .run(List.of("-T", "T", "-s", "127.77.200.200", "-W", "2"))));
        assertEquals(ToolException.FAILURE, e.status());
        assertTrue(e.getMessage().contains("the dapltest server: no connection to"),
                e.getMessage());
        assertTrue(System.nanoTime() - start < 30_000_000_000L, "took too long");
    }
}
