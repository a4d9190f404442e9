package org.jdapl.provider.emu.loopback;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jdapl.provider.emu.EmuEp;
import org.jdapl.provider.emu.EmuIa;
import org.jdapl.provider.emu.EmuLimits;
import org.jdapl.provider.emu.RcRules;
import org.jdapl.provider.emu.Segments;
import org.jdapl.provider.emu.WorkRequest;

import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.MemPriv;

/**
 * How the loopback link executes OFED's extended DTOs at the head of a request queue ({@link
 * LoopbackLink#pump}, domain lock and the requester's send lock held).
 *
 * <p>An atomic reads, changes and writes the 64 bits of the responder's memory under the domain lock,
 * which every EP connected to the responder's IA shares (a connect merges the IAs' domains), so it is
 * atomic with respect to every other atomic on the same target, whichever endpoint posted it, as on
 * a NIC; the value the target held lands in the requester's 8 bytes. A target its RMR does not grant
 * {@link MemPriv#REMOTE_ATOMIC} fails REMOTE_ACCESS and breaks the connection, as RC does.
 *
 * <p>An RDMA Write with immediate data copies as an RDMA Write does, then consumes the responder's
 * next receive (whose buffer it leaves untouched) and completes it with the immediate data: the data
 * is visible before that completion. With no receive posted it waits as a send does (RNR) and then
 * fails RECEIVER_NOT_READY.
 */
final class LoopbackExtensions {
    private LoopbackExtensions() {
    }

    /**
     * Executes the head request {@code x}; false if it must wait for a receive at the peer.
     *
     * @param fromIa the requester's IA (its timers)
     * @param peerIa the peer's IA (its rmr_contexts)
     * @param waits marks the requester's head as waiting for a receive of the peer
     */
    static boolean execute(EmuEp from, EmuIa fromIa, WorkRequest.Ext x, EmuEp peer, EmuIa peerIa, Runnable waits) {
        if (!Segments.usable(x.iov)) {
            return from.fail(x, DtoStatus.LOCAL_PROTECTION);
        }
        long ctx = x.remote.rmrContext() & 0xffff_ffffL;
        if (x.type == ExtensionType.RDMA_WRITE_IMMED) {
            return writeImmediate(from, fromIa, x, peer, ctx, waits);
        }
        MemorySegment target = peerIa.contexts().resolve((int) ctx, peer, x.remote.targetAddress(), 8,
                MemPriv.REMOTE_ATOMIC);
        if (target == null) {
            return from.fail(x, DtoStatus.REMOTE_ACCESS);
        }
        long old = target.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
        if (x.type == ExtensionType.FETCH_AND_ADD) {
            target.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, old + x.operand);
        } else if (old == x.operand) {
            target.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, x.swap);
        }
        Segments.slices(x.iov).getFirst().set(ValueLayout.JAVA_LONG_UNALIGNED, 0, old);
        from.requests().pollFirst();
        from.completeRequest(x, DtoStatus.SUCCESS, 8);
        return true;
    }

    private static boolean writeImmediate(EmuEp from, EmuIa fromIa, WorkRequest.Ext x, EmuEp peer, long ctx,
                                          Runnable waits) {
        WorkRequest.Recv recv = peer.queues().nextReceive();
        if (recv == null) {
            if (!peer.queues().awaitReceive(waits)) {
                return true;
            }
            long now = System.nanoTime();
            if (x.rnrDeadline == 0) {
                x.rnrDeadline = now + TimeUnit.MILLISECONDS.toNanos(EmuLimits.RNR_RETRY_MILLIS);
            } else if (now - x.rnrDeadline >= 0) {
                return from.fail(x, DtoStatus.RECEIVER_NOT_READY);
            }
            if (!x.rnrTimerArmed) {
                x.rnrTimerArmed = true;
                fromIa.schedule(x.rnrDeadline - now + TimeUnit.MILLISECONDS.toNanos(1), () -> {
                    x.rnrTimerArmed = false;
                    if (!from.isFreed()) {
                        from.pumpRequests();
                    }
                });
            }
            return false;
        }
        MemorySegment target = RcRules.remoteMemory(peer, ctx, x.remote.targetAddress(), x.length, false);
        if (target == null) {
            return from.fail(x, DtoStatus.REMOTE_ACCESS);
        }
        Segments.copy(Segments.slices(x.iov), List.of(target), x.length);
        peer.queues().takeReceive();
        recv.checkNotCompleted();
        peer.evds().extendedCompleted(true, recv.cookie, recv.flagBits(), DtoStatus.SUCCESS, x.length,
                ExtensionType.RDMA_WRITE_IMMED_DATA, x.immediateData, null);
        recv.markCompleted();
        from.requests().pollFirst();
        from.completeRequest(x, DtoStatus.SUCCESS, x.length);
        return true;
    }
}
