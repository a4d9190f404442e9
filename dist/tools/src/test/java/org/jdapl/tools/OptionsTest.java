package org.jdapl.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.jdapl.tools.dapltest.DapltestOptions;
import org.jdapl.tools.dapltest.Op;
import org.jdapl.tools.dtest.DtestOptions;
import org.junit.jupiter.api.Test;

class OptionsTest {
    @Test
    void dtestModesAndDefaults() {
        DtestOptions self = DtestOptions.parse(List.of());
        assertEquals(DtestOptions.Mode.SELF, self.mode());
        assertEquals("emu0", self.iaName());
        assertEquals(65536, self.bufLen());
        assertEquals(100, self.burst());
        assertNull(self.server());
        DtestOptions client = DtestOptions.parse(List.of("-h", "node7:4791", "-P", "ofa-v2-ib0", "-b", "1m", "-B", "5", "-V", "-C"));
        assertEquals(DtestOptions.Mode.CLIENT, client.mode());
        assertEquals("node7", client.server().getHostString());
        assertEquals(4791, client.server().getPort());
        assertEquals(1 << 20, client.bufLen());
        assertTrue(client.validate() && client.connectOnly());
        assertEquals(0, DtestOptions.parse(List.of("-h", "10.0.0.1")).server().getPort());
        assertEquals(DtestOptions.Mode.SERVER, DtestOptions.parse(List.of("-s")).mode());
    }

    @Test
    void dtestRejectsBadCommandLines() {
        for (List<String> args : List.of(List.of("-s", "-h", "x"), List.of("-m", "8"), List.of("-b", "0"),
                List.of("extra"), List.of("-h", ":12"), List.of("-h", "x:99999"), List.of("-P", " "))) {
            ToolException e = assertThrows(ToolException.class, () -> DtestOptions.parse(args), args.toString());
            assertEquals(ToolException.USAGE, e.status());
        }
    }

    @Test
    void dapltestOperationLists() {
        DapltestOptions t = DapltestOptions.parse(List.of("-T", "T", "-t", "2", "-w", "3", "-i", "5", "-V",
                "client", "SR", "256", "server", "RW", "4k", "2", "client", "rr", "64"));
        assertEquals(List.of(new Op(true, Op.Kind.SR, 256, 1), new Op(false, Op.Kind.RW, 4096, 2),
                new Op(true, Op.Kind.RR, 64, 1)), t.ops());
        assertEquals(2, t.threads());
        DapltestOptions p = DapltestOptions.parse(List.of("-T", "P", "RR", "8192", "4"));
        assertEquals(List.of(new Op(true, Op.Kind.RR, 8192, 4)), p.ops());
        assertEquals(4, DapltestOptions.parse(List.of("-T", "T")).ops().size());
        for (List<String> args : List.<List<String>>of(List.of(), List.of("-T", "X"), List.of("-T", "T", "SR", "64"),
                List.of("-T", "T", "client"), List.of("-T", "P", "RW", "64", "SR", "64"),
                List.of("-T", "T", "client", "RW", "4", "8"), List.of("-T", "T", "-t", "0"))) {
            ToolException e = assertThrows(ToolException.class, () -> DapltestOptions.parse(args), args.toString());
            assertEquals(ToolException.USAGE, e.status(), e.getMessage());
        }
    }

    @Test
    void dapltestModesAsOfedWritesThem() {
        DapltestOptions s = DapltestOptions.parse(List.of("-T", "S", "-D", "ofa-v2-ib0"));
        assertEquals('S', s.test());
        assertEquals(DapltestOptions.DEFAULT_CONN_QUAL, s.connQual());
        DapltestOptions p = DapltestOptions.parse(List.of("-T", "P", "-s", "10.0.0.5:4000", "-D", "emu-tcp", "-i", "100",
                "-m", "p", "RW", "4096", "2"));
        assertEquals("10.0.0.5", p.server().getHostString());
        assertEquals(4000, p.server().getPort());
        assertTrue(p.poll());
        assertEquals(100, p.warmup());
        DapltestOptions f = DapltestOptions.parse(List.of("-T", "F", "-s", "host", "-f", "queryinfo", "0", "17"));
        assertEquals(List.of(0, 17), f.cases());
        assertEquals(0, f.server().getPort());
        DapltestOptions l = DapltestOptions.parse(List.of("-T", "L", "-m", "500", "-w", "3"));
        assertEquals(500, l.maximum());
        assertEquals(3, l.width());
        assertEquals('Q', DapltestOptions.parse(List.of("-T", "Q", "-s", "h")).test());
        // OFED's transaction options: -P polls, -R the QoS, -d prints the command; an OP's size defaults to 4096.
        DapltestOptions o = DapltestOptions.parse(List.of("-T", "T", "-s", "h", "-P", "-R", "HT", "-d", "client", "SR",
                "server", "SR", "client", "RW", "8192", "2"));
        assertTrue(o.poll() && o.debug());
        assertEquals(org.jdapl.dat.Qos.HIGH_THROUGHPUT, o.qos());
        assertEquals(List.of(new Op(true, Op.Kind.SR, 4096, 1), new Op(false, Op.Kind.SR, 4096, 1),
                new Op(true, Op.Kind.RW, 8192, 2)), o.ops());
        for (List<String> args : List.<List<String>>of(List.of("-T", "Q"), List.of("-T", "P", "-m", "x"),
                List.of("-T", "P", "-t", "2"), List.of("-T", "F"), List.of("-T", "F", "-f", "nope"),
                List.of("-T", "L", "-m", "p"), List.of("-T", "S", "-s", "h"), List.of("-T", "T", "-s", ":5"),
                List.of("-T", "L", "extra"), List.of("-T", "P", "server", "RW", "64"), List.of("-T", "T", "-R", "XX"),
                List.of("-T", "P", "-P"), List.of("-T", "L", "-R", "BE"), List.of("-T", "Z"), List.of("-T", "T", "-x"),
                List.of("-T", "F", "-f", "nothing"), List.of("-T", "L", "-i", "5"))) {
            ToolException e = assertThrows(ToolException.class, () -> DapltestOptions.parse(args), args.toString());
            assertEquals(ToolException.USAGE, e.status(), e.getMessage());
        }
    }

    /** The command lines OFED's users and the Soft-RoCE harness (scripts/rxe) type, as they always parsed. */
    @Test
    void ofedAndHarnessCommandLinesParseAsTheyAlwaysDid() {
        DapltestOptions server = DapltestOptions.parse(List.of("-T", "S", "-D", "ia"));
        assertEquals('S', server.test());
        assertEquals("ia", server.iaName());
        DapltestOptions t = DapltestOptions.parse(List.of("-T", "T", "-s", "host", "-D", "ia", "-i", "1000",
                "client", "SR", "256", "server", "SR", "256"));
        assertEquals("host", t.server().getHostString());
        assertEquals(1000, t.iterations());
        assertEquals(List.of(new Op(true, Op.Kind.SR, 256, 1), new Op(false, Op.Kind.SR, 256, 1)), t.ops());
        DapltestOptions v = DapltestOptions.parse(List.of("-T", "T", "-s", "h", "-D", "ia", "-V", "-t", "2", "-w", "2",
                "-i", "50"));
        assertTrue(v.validate());
        assertEquals(2, v.threads());
        assertEquals(2, v.endpoints());
        DapltestOptions p = DapltestOptions.parse(List.of("-T", "P", "-s", "h", "-D", "ia", "-i", "2000", "-p", "1",
                "-m", "p", "SR", "64"));
        assertTrue(p.poll());
        assertEquals(1, p.pipeline());
        assertEquals(List.of(new Op(true, Op.Kind.SR, 64, 1)), p.ops());
        assertEquals(200, DapltestOptions.parse(List.of("-T", "P", "--warmup", "200")).warmup());
        assertEquals(64, DapltestOptions.parse(List.of("-T", "L", "-D", "ia", "-m", "64")).maximum());
        DtestOptions ofed = DtestOptions.parse(List.of("-O"));
        assertTrue(ofed.ofed());
        assertEquals(DtestOptions.Mode.SELF, ofed.mode());
        DtestOptions client = DtestOptions.parse(List.of("-O", "-h", "192.168.77.1", "-P", "ofa-v2-rxe0-1", "-b", "4m",
                "-B", "1000", "-t", "60", "-W", "120"));
        assertEquals(DtestOptions.Mode.CLIENT, client.mode());
        assertEquals(4 << 20, client.bufLen());
        assertEquals(120_000_000L, client.serverWaitMicros());
        DtestOptions grouped = DtestOptions.parse(List.of("-OsVb4k", "--burst=7"));
        assertEquals(DtestOptions.Mode.SERVER, grouped.mode());
        assertTrue(grouped.validate());
        assertEquals(4096, grouped.bufLen());
        assertEquals(7, grouped.burst());
    }
}
