package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.jdapl.dat.CloseFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.RmrTriplet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.jdapl.provider.emu.faults.EmuFaults;

@Timeout(60)
class FaultHookTest {

    @Test
    void heldTransfersStayInProgressAndResumeInOrder() throws Exception {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            MemorySegment remote = f.memory(64);
            LocalMemoryRegion rl = f.b.lmr(remote);
            LocalMemoryRegion src = f.a.lmr(f.memory(64));
            src.segment().fill((byte) 3);
            EmuFaults.holdTransfers(f.a.ia, true);
            for (int i = 0; i < 8; i++) {
                eps[0].postRdmaWrite(iov(src, i, 1), i, new RmrTriplet(rl.rmrContext(),
                        rl.query().registeredAddress() + i, 1), none());
            }
            Thread.sleep(50);
            assertEquals(0, f.a.evd.count());
            assertEquals(0, remote.get(ValueLayout.JAVA_BYTE, 0));
            assertEquals(EpState.CONNECTED, eps[0].query().state());
            EmuFaults.holdTransfers(f.a.ia, false);
            for (int i = 0; i < 8; i++) {
                DatEvent.DtoCompletion c = f.a.nextDto();
                assertEquals(i, c.cookie());
                assertEquals(DtoStatus.SUCCESS, c.status());
            }
            assertEquals(3, remote.get(ValueLayout.JAVA_BYTE, 7));
        }
    }

    @Test
    void gracefulDisconnectWaitsForHeldRequestsThenCompletesThemFirst() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            LocalMemoryRegion rl = f.b.lmr(f.memory(64));
            LocalMemoryRegion src = f.a.lmr(f.memory(64));
            EmuFaults.holdTransfers(f.a.ia, true);
            for (int i = 0; i < 4; i++) {
                eps[0].postRdmaWrite(iov(src, 0, 8), i, new RmrTriplet(rl.rmrContext(),
                        rl.query().registeredAddress(), 8), none());
            }
            eps[0].disconnect(CloseFlag.GRACEFUL);
            assertEquals(EpState.DISCONNECT_PENDING, eps[0].query().state());
            eps[0].disconnect(CloseFlag.GRACEFUL);
            assertEquals(EpState.DISCONNECT_PENDING, eps[0].query().state());
            assertEquals(EpState.CONNECTED, eps[1].query().state());
            EmuFaults.holdTransfers(f.a.ia, false);
            for (int i = 0; i < 4; i++) {
                assertEquals(DtoStatus.SUCCESS, f.a.nextDto().status());
            }
            f.a.nextConnection(EventNumber.CONNECTION_DISCONNECTED);
            f.b.nextConnection(EventNumber.CONNECTION_DISCONNECTED);
            assertEquals(EpState.DISCONNECTED, eps[0].query().state());
            assertEquals(EpState.DISCONNECTED, eps[1].query().state());
        }
    }

    @Test
    void breakWhileHeldFlushesEveryDtoExactlyOnce() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            LocalMemoryRegion sinkA = f.a.lmr(f.memory(64));
            LocalMemoryRegion src = f.a.lmr(f.memory(64));
            EmuFaults.holdTransfers(f.a.ia, true);
            for (int i = 0; i < 5; i++) {
                eps[0].postRecv(iov(sinkA, i, 1), 100 + i, none());
                eps[0].postSend(iov(src, i, 1), i, none());
            }
            EmuFaults.breakConnection(eps[1]);
            Set<Long> cookies = new HashSet<>();
            List<DatEvent> events = new ArrayList<>();
            DatEvent e;
            do {
                e = f.a.next();
                events.add(e);
                if (e instanceof DatEvent.DtoCompletion c) {
                    assertEquals(DtoStatus.FLUSHED, c.status());
                    assertTrue(cookies.add(c.cookie()), "completed twice: " + c.cookie());
                }
            } while (!(e instanceof DatEvent.Connection));
            assertEquals(EventNumber.CONNECTION_BROKEN, e.number());
            assertEquals(10, cookies.size(), events::toString);
            f.b.nextConnection(EventNumber.CONNECTION_BROKEN);
            EmuFaults.holdTransfers(f.a.ia, false);
            assertEquals(0, f.a.evd.count());
        }
    }

    @Test
    void freeUnderTrafficCompletesEachDtoAtMostOnceAndAddsNothingAfterwards() throws Exception {
        try (Fixture f = new Fixture(100_000)) {
            for (int round = 0; round < 20; round++) {
                Endpoint[] eps = f.connect();
                LocalMemoryRegion sink = f.b.lmr(f.memory(4096));
                LocalMemoryRegion src = f.a.lmr(f.memory(4096));
                for (int i = 0; i < 64; i++) {
                    eps[1].postRecv(iov(sink, i * 64L, 64), i, none());
                }
                for (int i = 0; i < 64; i++) {
                    eps[0].postSend(iov(src, i * 64L, 64), i, none());
                }
                eps[0].free();
                int queued = f.a.evd.count();
                Thread.sleep(5);
                assertEquals(queued, f.a.evd.count(), "events added after free");
                Set<Long> seen = new HashSet<>();
                long last = -1;
                boolean failed = false;
                while (f.a.evd.count() > 0) {
                    DatEvent.DtoCompletion c = (DatEvent.DtoCompletion) f.a.evd.dequeue().orElseThrow();
                    assertTrue(seen.add(c.cookie()));
                    assertTrue(c.cookie() > last, "out of order");
                    last = c.cookie();
                    if (c.status() != DtoStatus.SUCCESS) {
                        failed = true;
                    } else {
                        assertTrue(!failed, "success after a failure");
                    }
                }
                f.b.nextConnectionSkippingDtos(EventNumber.CONNECTION_DISCONNECTED);
                eps[1].free();
                sink.free();
                src.free();
            }
        }
    }
}
