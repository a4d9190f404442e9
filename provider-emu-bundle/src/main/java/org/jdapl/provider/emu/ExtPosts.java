package org.jdapl.provider.emu;

import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import org.jdapl.provider.emu.evd.Wakeups;

import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.RmrTriplet;

/**
 * The posts of OFED's extended DTOs on an RC endpoint (domain lock taken): the checks, then a
 * {@link WorkRequest.Ext} in the request queue, so that it executes in order with the EP's other
 * requests. Both fabrics offer atomics and RDMA Write with immediate data ({@link #offered}) and
 * datagram endpoints ({@link #datagramsOffered}).
 */
final class ExtPosts {
    private ExtPosts() {
    }

    /** Whether the IA's fabric offers atomics and RDMA Write with immediate data (both do). */
    static boolean offered(EmuIa ia) {
        return true;
    }

    /** Whether the IA's fabric offers datagram endpoints (both do). */
    static boolean datagramsOffered(EmuIa ia) {
        return true;
    }

    /**
     * @throws DatException MODEL_NOT_SUPPORTED where the fabric does not offer datagram endpoints
     */
    static void requireDatagrams(EmuIa ia, String operation) {
        if (!datagramsOffered(ia)) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, operation + ": not offered by the "
                    + ia.fabric().name() + " fabric of the emulated provider");
        }
    }

    /**
     * A fetch-and-add or compare-and-swap: 8 local bytes the EP may write, 8 remote bytes at an 8-byte
     * aligned address; the remote side is checked when it executes (REMOTE_ATOMIC).
     *
     * <p>Behaviours: EXT_01, EXT_03.
     */
    static void atomic(EmuEp ep, ExtensionType type, long operand, long swap, LmrTriplet local, long cookie,
                       RmrTriplet remote, Set<CompletionFlag> flags) {
        String op = type == ExtensionType.FETCH_AND_ADD ? "dat_ib_post_fetch_and_add" : "dat_ib_post_cmp_and_swap";
        EmuIa ia = ep.ia();
        ReentrantLock lock = ia.domain().acquire();
        try {
            ep.checkLive();
            DtoChecks.flags(flags, 7);
            ep.requireConnected(op);
            if (local == null || local.length() != 8) {
                throw DatException.invalidParameter(3, op + ": the local buffer is one 8-byte triplet");
            }
            if (remote == null || remote.length() != 8 || (remote.targetAddress() & 7) != 0) {
                throw DatException.invalidParameter(5, op + ": the remote target is 8 bytes at an 8-byte aligned address");
            }
            List<LmrTriplet> iov = Segments.check(ia, ep.pz(), List.of(local), MemPriv.LOCAL_WRITE, 1, 3);
            ep.requireRequestSlot();
            ep.queues().addRequest(new WorkRequest.Ext(type, iov, remote, 8, operand, swap, 0, cookie, flags));
            ep.kick();
        } finally {
            Wakeups.release(lock);
        }
    }

    /** An RDMA Write with immediate data: the checks of an RDMA Write. Behaviours: EXT_05. */
    static void writeImmediate(EmuEp ep, DtoChecks checks, List<LmrTriplet> iov, long cookie, RmrTriplet remote,
                               int immediateData, Set<CompletionFlag> flags) {
        EmuIa ia = ep.ia();
        ReentrantLock lock = ia.domain().acquire();
        try {
            ep.checkLive();
            DtoChecks.flags(flags, 6);
            ep.requireConnected("dat_ib_post_rdma_write_immed");
            DtoChecks.Checked c = checks.rdmaLocal(false, iov, remote);
            ep.requireRequestSlot();
            ep.queues().addRequest(new WorkRequest.Ext(ExtensionType.RDMA_WRITE_IMMED, c.iov(), remote, c.length(),
                    0, 0, immediateData, cookie, flags));
            ep.kick();
        } finally {
            Wakeups.release(lock);
        }
    }
}
