package org.jdapl.provider.emu;

import static org.jdapl.provider.emu.Fixture.iov;
import static org.jdapl.provider.emu.Fixture.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.LocalMemoryRegion;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.VaType;
import org.junit.jupiter.api.Test;

/** The reliable-connection rules both fabrics apply, checked on a responder EP directly. */
class RcRulesTest {

    private static <T> T locked(Endpoint ep, Supplier<T> action) {
        return ((EmuEp) ep).ia().locked(action);
    }

    private static RcRules.SendVerdict take(Endpoint responder, long length, boolean invalidate, long ctx) {
        return locked(responder, () -> RcRules.takeReceive((EmuEp) responder, length, invalidate, ctx));
    }

    @Test
    void OBJ_07_sendWithoutReceiveIsRnrAndTakesTheReceiveOnceOnePosted() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            assertSame(RcRules.SendVerdict.RNR, take(eps[1], 8, false, 0));
            eps[1].postRecv(iov(f.b.lmr(f.memory(64)), 0, 64), 7, none());
            RcRules.SendVerdict v = take(eps[1], 64, false, 0);
            assertTrue(v.accepted());
            assertEquals(7, v.recv().cookie);
            assertEquals(DtoOperation.RECEIVE, v.op());
            assertSame(RcRules.SendVerdict.RNR, take(eps[1], 8, false, 0), "the receive is consumed");
        }
    }

    @Test
    void OBJ_07_sendLongerThanTheReceiveFailsLocalLengthAtTheReceiverAndRemoteResponderAtTheSender() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            eps[1].postRecv(iov(f.b.lmr(f.memory(64)), 0, 64), 1, none());
            RcRules.SendVerdict v = take(eps[1], 65, false, 0);
            assertFalse(v.accepted());
            assertEquals(DtoStatus.LOCAL_LENGTH, v.recvStatus());
            assertEquals(DtoStatus.REMOTE_RESPONDER, v.senderStatus());
        }
    }

    @Test
    void receiveIntoAFreedLmrFailsLocalProtection() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            LocalMemoryRegion lmr = f.b.lmr(f.memory(64));
            eps[1].postRecv(iov(lmr, 0, 64), 1, none());
            lmr.free();
            RcRules.SendVerdict v = take(eps[1], 8, false, 0);
            assertEquals(DtoStatus.LOCAL_PROTECTION, v.recvStatus());
            assertEquals(DtoStatus.REMOTE_RESPONDER, v.senderStatus());
        }
    }

    @Test
    void sendWithInvalidateOfAContextTheResponderDoesNotOwnFailsRemoteAccessOnBothSides() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            for (long ctx : new long[] {0x1234_5678L, 1L << 32}) {
                eps[1].postRecv(iov(f.b.lmr(f.memory(64)), 0, 64), 1, none());
                RcRules.SendVerdict v = take(eps[1], 8, true, ctx);
                assertEquals(DtoOperation.RECEIVE_WITH_INVALIDATE, v.op());
                assertEquals(DtoStatus.REMOTE_ACCESS, v.recvStatus());
                assertEquals(DtoStatus.REMOTE_ACCESS, v.senderStatus());
                assertEquals(0, v.invalidated());
            }
        }
    }

    @Test
    void LMR_06_remoteMemoryChecksContextPrivilegeAndBounds() {
        try (Fixture f = new Fixture()) {
            Endpoint[] eps = f.connect();
            LocalMemoryRegion lmr = f.b.ia.createLmr(f.b.pz, f.memory(4096),
                    Set.of(MemPriv.LOCAL_READ, MemPriv.LOCAL_WRITE, MemPriv.REMOTE_WRITE), VaType.VA);
            long ctx = lmr.rmrContext() & 0xffff_ffffL;
            long base = lmr.query().registeredAddress();
            EmuEp responder = (EmuEp) eps[1];
            assertNotNull(locked(eps[1], () -> RcRules.remoteMemory(responder, ctx, base, 4096, false)));
            assertEquals(16, locked(eps[1], () -> RcRules.remoteMemory(responder, ctx, base + 8, 16, false)).byteSize());
            assertNull(locked(eps[1], () -> RcRules.remoteMemory(responder, ctx, base, 64, true)), "no REMOTE_READ");
            assertNull(locked(eps[1], () -> RcRules.remoteMemory(responder, ctx, base + 1, 4096, false)), "past the end");
            assertNull(locked(eps[1], () -> RcRules.remoteMemory(responder, ctx, base - 1, 8, false)), "before the start");
            assertNull(locked(eps[1], () -> RcRules.remoteMemory(responder, ctx ^ 1, base, 8, false)), "another context");
            assertNull(locked(eps[1], () -> RcRules.remoteMemory(responder, ctx | 1L << 32, base, 8, false)),
                    "a context over 32 bits");
            lmr.free();
            assertNull(locked(eps[1], () -> RcRules.remoteMemory(responder, ctx, base, 8, false)), "a freed LMR");
        }
    }

    @Test
    void rnrWindowStartsWithTheFirstRefusalAndEndsAfterTheRetryTime() {
        WorkRequest.Send send = new WorkRequest.Send(java.util.List.of(), 0, 1, Set.<CompletionFlag>of(), false, 0);
        long now = 1_000_000_000L;
        assertFalse(RcRules.rnrExhausted(send, now));
        long window = TimeUnit.MILLISECONDS.toNanos(EmuLimits.RNR_RETRY_MILLIS);
        assertEquals(now + window, send.rnrDeadline);
        assertFalse(RcRules.rnrExhausted(send, now + window - 1));
        assertTrue(RcRules.rnrExhausted(send, now + window));
    }
}
