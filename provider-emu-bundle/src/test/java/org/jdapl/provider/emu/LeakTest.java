package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

import org.jdapl.dat.Cno;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventDispatcher;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.ProtectionZone;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.VaType;
import org.jdapl.dat.spi.IaSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Thousands of IA open/close cycles, each with live objects, connections and threads, leak nothing. */
@Timeout(120)
class LeakTest {
    private static final int CYCLES = 2000;

    @Test
    void openCloseCyclesLeaveNoObjectsThreadsOrAddresses() {
        EmuProvider provider = new EmuProvider();
        warmUp(provider);
        int threadsBefore = emuThreads();
        MemorySegment memory = MemorySegment.ofArray(new byte[256]);
        for (int cycle = 0; cycle < CYCLES; cycle++) {
            InterfaceAdapter a = provider.open(new IaSpec("leak-a", "loopback", "", true, "test"), 4);
            InterfaceAdapter b = provider.open(new IaSpec("leak-b", "loopback", "", true, "test"), 4);
            ProtectionZone pa = a.createPz();
            ProtectionZone pb = b.createPz();
            Consumer<EventDispatcher> agent = e -> { };
            Cno cno = a.createCno(agent);
            EventDispatcher ea = a.createEvd(64, cno, Dat.EVD_DEFAULT_FLAGS);
            EventDispatcher eb = b.createEvd(64, null, Dat.EVD_DEFAULT_FLAGS);
            Endpoint epa = a.createEp(pa, ea, ea, ea, null);
            Endpoint epb = b.createEp(pb, eb, eb, eb, null);
            LocalMemoryRegion la = a.createLmr(pa, memory, Dat.MEM_PRIV_ALL, VaType.VA);
            LocalMemoryRegion lb = b.createLmr(pb, memory, Dat.MEM_PRIV_ALL, VaType.ZB);
            PublicServicePoint psp = b.createPspAny(eb, PspFlag.CONSUMER);
            pa.createRmr();
            epa.connect(b.query().attributes().address(), psp.query().connQual(), Fixture.WAIT, null);
            DatEvent.ConnectionRequest cr = (DatEvent.ConnectionRequest) eb.waitEvent(Fixture.WAIT);
            cr.request().accept(epb, null);
            assertEquals(EventNumber.CONNECTION_ESTABLISHED, ea.waitEvent(Fixture.WAIT).number());
            epb.postRecv(iov(lb, 0, 16), 1, none());
            epa.postSend(iov(la, 0, 16), 2, none());
            if (cycle % 2 == 0) {
                epa.postSend(iov(la, 0, 16), 3, Set.of());
            }
            if (cycle % 3 == 0) {
                a.close();
                b.close();
            } else {
                b.close();
                a.close();
            }
        }
        Map<HandleType, Integer> left = provider.openObjects();
        assertTrue(left.values().stream().allMatch(n -> n == 0), "objects left open: " + left);
        int threadsAfter = emuThreads();
        assertTrue(threadsAfter <= threadsBefore, "emulated provider threads before " + threadsBefore + ", after "
                + threadsAfter);
        // the fabric released every address: a fresh IA still gets one
        try (InterfaceAdapter ia = provider.open(new IaSpec("leak-c", "loopback", "", true, "test"), 1)) {
            assertTrue(ia.query().attributes().address().toString().contains("127.77."));
        }
    }

    private static void warmUp(EmuProvider provider) {
        try (InterfaceAdapter ia = provider.open(new IaSpec("warm", "loopback", "", true, "test"), 1)) {
            ia.createPz();
        }
    }

    private static int emuThreads() {
        return (int) Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("jdapl-emu-")).count();
    }
}
