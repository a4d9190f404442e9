package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Set;

import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.RemoteMemoryRegion;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class ProtectionTest {

    /** RDMA Write that the target refuses: REMOTE_ACCESS, connection broken, target untouched. */
    private static void refusedWrite(Fixture f, Endpoint[] eps, MemorySegment target, RmrTriplet remote) {
        LocalMemoryRegion src = f.a.lmr(f.memory(64));
        src.segment().fill((byte) 0x77);
        byte[] before = target.toArray(ValueLayout.JAVA_BYTE);
        eps[0].postRdmaWrite(iov(src, 0, remote.length()), 9, remote, none());
        DatEvent.DtoCompletion c = f.a.nextDto();
        assertEquals(DtoStatus.REMOTE_ACCESS, c.status());
        f.a.nextConnection(EventNumber.CONNECTION_BROKEN);
        f.b.nextConnection(EventNumber.CONNECTION_BROKEN);
        assertEquals(EpState.DISCONNECTED, eps[0].query().state());
        assertEquals(EpState.DISCONNECTED, eps[1].query().state());
        assertEquals(java.util.Arrays.toString(before),
                java.util.Arrays.toString(target.toArray(ValueLayout.JAVA_BYTE)));
    }

    @Test
    void outOfBoundsWriteIsRefused() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            MemorySegment region = f.memory(128);
            LocalMemoryRegion lmr = f.b.lmr(region);
            long base = lmr.query().registeredAddress();
            refusedWrite(f, eps, region, new RmrTriplet(lmr.rmrContext(), base + 100, 64));
        }
    }

    @Test
    void writeBelowTheRegionIsRefused() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            MemorySegment region = f.memory(128);
            LocalMemoryRegion lmr = f.b.lmr(region);
            long base = lmr.query().registeredAddress();
            refusedWrite(f, eps, region, new RmrTriplet(lmr.rmrContext(), base - 1, 8));
        }
    }

    @Test
    void writeWithoutRemoteWritePrivilegeIsRefused() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            MemorySegment region = f.memory(128);
            LocalMemoryRegion lmr = f.b.ia.createLmr(f.b.pz, region,
                    EnumSet.of(MemPriv.LOCAL_READ, MemPriv.REMOTE_READ), VaType.ZB);
            refusedWrite(f, eps, region, new RmrTriplet(lmr.rmrContext(), 0, 8));
        }
    }

    @Test
    void freedLmrContextIsRefused() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            MemorySegment region = f.memory(128);
            LocalMemoryRegion lmr = f.b.lmr(region);
            int ctx = lmr.rmrContext();
            long base = lmr.query().registeredAddress();
            lmr.free();
            refusedWrite(f, eps, region, new RmrTriplet(ctx, base, 8));
        }
    }

    @Test
    void guessedContextIsRefused() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            MemorySegment region = f.memory(128);
            LocalMemoryRegion lmr = f.b.lmr(region);
            refusedWrite(f, eps, region, new RmrTriplet(lmr.rmrContext() + 1, lmr.query().registeredAddress(), 8));
        }
    }

    @Test
    void rmrBindExposesOnlyItsWindowAndUnbindRevokesIt() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            MemorySegment region = f.memory(256);
            LocalMemoryRegion lmr = f.b.lmr(region);
            RemoteMemoryRegion rmr = f.b.pz.createRmrForEp();
            int ctx = rmr.bind(lmr, 64, 32, EnumSet.of(MemPriv.REMOTE_WRITE), VaType.ZB, eps[1], 5, none());
            assertNotEquals(0, ctx);
            DatEvent.RmrBindCompletion bound = (DatEvent.RmrBindCompletion) f.b.next();
            assertEquals(DtoStatus.SUCCESS, bound.status());
            assertEquals(DatReturnSubtype.INVALID_STATE_LMR_IN_USE,
                    assertThrows(DatException.class, lmr::free).subtype());
            LocalMemoryRegion src = f.a.lmr(f.memory(32));
            src.segment().fill((byte) 1);
            eps[0].postRdmaWrite(iov(src, 0, 32), 1, new RmrTriplet(ctx, 0, 32), none());
            assertEquals(DtoStatus.SUCCESS, f.a.nextDto().status());
            assertEquals(0, region.get(ValueLayout.JAVA_BYTE, 63));
            assertEquals(1, region.get(ValueLayout.JAVA_BYTE, 64));
            assertEquals(1, region.get(ValueLayout.JAVA_BYTE, 95));
            assertEquals(0, region.get(ValueLayout.JAVA_BYTE, 96));
            rmr.unbind(eps[1], 6, none());
            assertEquals(DtoStatus.SUCCESS, ((DatEvent.RmrBindCompletion) f.b.next()).status());
            lmr.free();
            refusedWrite(f, eps, region, new RmrTriplet(ctx, 0, 8));
        }
    }

    @Test
    void contextsAreDistinctAndNotSequential() {
        try (Fixture f = new Fixture()) {
            Set<Integer> seen = new HashSet<>();
            int sequential = 0;
            int last = 0;
            for (int i = 0; i < 200; i++) {
                int ctx = f.a.lmr(f.memory(8)).rmrContext();
                assertTrue(seen.add(ctx));
                if (ctx == last + 1) {
                    sequential++;
                }
                last = ctx;
            }
            assertTrue(sequential < 3, sequential + " contexts followed their predecessor");
        }
    }

    @Test
    void localMistakesFailAtPost() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            LocalMemoryRegion readOnly = f.a.ia.createLmr(f.a.pz, f.memory(64), EnumSet.of(MemPriv.LOCAL_READ),
                    VaType.VA);
            assertEquals(DatReturnType.PRIVILEGES_VIOLATION, assertThrows(DatException.class,
                    () -> eps[0].postRecv(iov(readOnly, 0, 8), 1, none())).type());
            LocalMemoryRegion other = f.a.ia.createLmr(f.a.ia.createPz(), f.memory(64), Dat.MEM_PRIV_ALL, VaType.VA);
            assertEquals(DatReturnType.PROTECTION_VIOLATION, assertThrows(DatException.class,
                    () -> eps[0].postSend(iov(other, 0, 8), 1, none())).type());
            LocalMemoryRegion freed = f.a.lmr(f.memory(64));
            freed.free();
            assertEquals(DatReturnType.PROTECTION_VIOLATION, assertThrows(DatException.class,
                    () -> eps[0].postSend(iov(freed, 0, 8), 1, none())).type());
            LocalMemoryRegion small = f.a.lmr(f.memory(64));
            assertEquals(DatReturnType.PROTECTION_VIOLATION, assertThrows(DatException.class,
                    () -> eps[0].postSend(iov(small, 60, 8), 1, none())).type());
            assertEquals(DatReturnType.LENGTH_ERROR, assertThrows(DatException.class,
                    () -> f.a.lmr(MemorySegment.ofArray(new byte[0]))).type());
            assertEquals(EpState.CONNECTED, eps[0].query().state());
        }
    }

    /**
     * The checks of a post are remembered for the same immutable segment list, but not past the free
     * of an LMR of the IA: the list posted again then fails as a list of a freed LMR does.
     */
    @Test
    void LMR_04_aListPostedAgainIsCheckedAgainOnceItsLmrIsFreed() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            LocalMemoryRegion into = f.b.lmr(f.memory(64));
            eps[1].postRecv(iov(into, 0, 8), 1, none());
            eps[1].postRecv(iov(into, 8, 8), 2, none());
            LocalMemoryRegion src = f.a.lmr(f.memory(64));
            var list = iov(src, 0, 8);
            eps[0].postSend(list, 3, none());
            eps[0].postSend(list, 4, none());
            assertEquals(DtoStatus.SUCCESS, f.b.nextDto().status());
            assertEquals(DtoStatus.SUCCESS, f.b.nextDto().status());
            assertEquals(DtoStatus.SUCCESS, f.a.nextDto().status());
            assertEquals(DtoStatus.SUCCESS, f.a.nextDto().status());
            src.free();
            assertEquals(DatReturnType.PROTECTION_VIOLATION, assertThrows(DatException.class,
                    () -> eps[0].postSend(list, 5, none())).type());
            assertEquals(EpState.CONNECTED, eps[0].query().state());
        }
    }

    @Test
    void privateDataUpToTheMaximumArrivesAndLargerFails() {
        try (Fixture f = new Fixture()) {
            assertEquals(256, f.a.ia.query().attributes().maxPrivateDataSize());
            assertEquals(256, f.a.ia.query().provider().maxPrivateDataSize());
            Endpoint ep = f.a.ep();
            DatException e = assertThrows(DatException.class, () -> ep.connect(f.b.ia.query().attributes().address(),
                    1, Fixture.WAIT, new byte[257]));
            assertEquals(DatReturnType.INVALID_PARAMETER, e.type());
            assertEquals(EpState.UNCONNECTED, ep.query().state());
            byte[] data = new byte[256];
            for (int i = 0; i < data.length; i++) {
                data[i] = (byte) i;
            }
            var psp = f.b.ia.createPsp(99, f.b.evd, org.jdapl.dat.PspFlag.CONSUMER);
            ep.connect(f.b.ia.query().attributes().address(), 99, Fixture.WAIT, data);
            DatEvent.ConnectionRequest cr = (DatEvent.ConnectionRequest) f.b.next();
            assertEquals(java.util.Arrays.toString(data), java.util.Arrays.toString(cr.request().query().privateData()));
            assertEquals(DatReturnType.INVALID_PARAMETER, assertThrows(DatException.class,
                    () -> cr.request().reject(new byte[300])).type());
            cr.request().reject(new byte[] {4, 2});
            DatEvent.Connection rejected = f.a.nextConnection(EventNumber.CONNECTION_PEER_REJECTED);
            assertEquals("[4, 2]", java.util.Arrays.toString(rejected.privateData()));
            psp.free();
        }
    }
}
