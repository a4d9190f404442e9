package org.jdapl.provider.emu;

import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.RmrTriplet;
import org.jdapl.dat.VaType;

/**
 * The synchronous checks of a post on an EP (domain lock held): the local segments (registered, of
 * the EP's PZ, with the needed privilege, LMR_04), the sizes against the EP's attributes, and the work
 * request they become. A check that fails throws the DAT return the post reports; nothing is queued.
 * One per EP, made with what the checks need: the EP (its PZ and attributes, which
 * {@code dat_ep_modify} changes), its IA (whose LMRs the segments must be) and the IA's contexts, the
 * spare requests of the EP's queues; and it keeps the memo of the last lists that passed.
 *
 * <p>A consumer that posts the same immutable list again (a pre-registered buffer, a ping-pong) is
 * not checked again while the EP's PZ and attributes stand and no LMR of the IA was unregistered since
 * ({@link Contexts#lmrsReleased}). A mutable list is checked at every post. Posting threads may race
 * on the memo harmlessly: each entry is immutable and replaced whole.
 */
final class DtoChecks {
    private final EmuEp ep;
    /** The EP's IA, whose LMRs the segments must be. */
    private final InterfaceAdapter ia;
    private final Contexts contexts;
    /** The EP's spare send and RDMA requests to reuse ({@link EpQueues#recycle}): one each, or null. */
    private final Supplier<WorkRequest.Send> spareSends;
    private final Supplier<WorkRequest.Rdma> spareRdmas;
    /** The last send, receive, RDMA Write and RDMA Read segment lists that passed (LMR_04). */
    private Checked sent;
    private Checked received;
    private Checked rdmaWritten;
    private Checked rdmaRead;

    DtoChecks(EmuEp ep, InterfaceAdapter ia, Contexts contexts, Supplier<WorkRequest.Send> spareSends,
              Supplier<WorkRequest.Rdma> spareRdmas) {
        this.ep = ep;
        this.ia = ia;
        this.contexts = contexts;
        this.spareSends = spareSends;
        this.spareRdmas = spareRdmas;
    }

    /**
     * @throws DatException INVALID_PARAMETER (argument {@code arg}) for no flags
     */
    static void flags(Set<CompletionFlag> flags, int arg) {
        if (flags == null) {
            throw DatException.invalidParameter(arg, "no completion flags (use an empty set)");
        }
    }

    /**
     * A send (OBJ_07) of the local segments {@code iov}, at most the EP's maximum message size: the EP's
     * spare send reused if it has one ({@link EpQueues#recycle}).
     */
    WorkRequest.Send send(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags, boolean invalidate,
                          int rmrContext) {
        Checked c = message(iov, true);
        WorkRequest.Send spare = spareSends.get();
        return spare != null ? spare.reuse(c.iov, c.length, cookie, flags, invalidate, rmrContext)
                : new WorkRequest.Send(c.iov, c.length, cookie, flags, invalidate, rmrContext);
    }

    /** A receive into the local segments {@code iov}, at most the EP's maximum message size. */
    WorkRequest.Recv recv(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags) {
        return recv(iov, cookie, flags, null);
    }

    /** {@link #recv(List, long, Set)} made in {@code spare}, a recycled receive, if not null. */
    WorkRequest.Recv recv(List<LmrTriplet> iov, long cookie, Set<CompletionFlag> flags, WorkRequest.Recv spare) {
        Checked c = message(iov, false);
        return spare != null ? spare.reuse(c.iov, c.length, cookie, flags)
                : new WorkRequest.Recv(c.iov, c.length, cookie, flags);
    }

    /**
     * The checked segments of a send or receive, at most the EP's maximum message size in all: the
     * memo of the last ones if {@code iov} is that same immutable list and nothing it depends on
     * changed, else checked now (and remembered if immutable).
     */
    Checked message(List<LmrTriplet> iov, boolean send) {
        Checked last = send ? sent : received;
        EmuPz pz = ep.pz();
        EpAttributes a = ep.attributes();
        int released = contexts.lmrsReleased();
        if (last != null && last.iov == iov && last.pz == pz && last.attributes == a && last.lmrsReleased == released) {
            return last;
        }
        List<LmrTriplet> checked = Segments.check(ia, pz, iov, send ? MemPriv.LOCAL_READ : MemPriv.LOCAL_WRITE,
                send ? a.maxRequestIov() : a.maxRecvIov(), 2);
        long length = Segments.total(checked);
        if (length > a.maxMessageSize()) {
            throw DatException.invalidParameter(2, (send ? "a message" : "a receive") + " of " + length
                    + " bytes is over the EP's maximum " + a.maxMessageSize());
        }
        Checked c = new Checked(checked, length, pz, a, released);
        if (checked == iov) {
            if (send) {
                sent = c;
            } else {
                received = c;
            }
        }
        return c;
    }

    /** A checked segment list, its length, and what its check depended on. */
    record Checked(List<LmrTriplet> iov, long length, EmuPz pz, EpAttributes attributes, int lmrsReleased) {
    }

    /**
     * An RDMA Read or Write (OBJ_08) between the local segments {@code iov} (or, for a read into an
     * RMR, {@code localTarget}) and {@code remote}: at most the EP's maximum RDMA size, and no more
     * than the remote triplet holds (LENGTH_ERROR). The remote side is checked when the request
     * executes (LMR_06).
     */
    WorkRequest.Rdma rdma(boolean read, List<LmrTriplet> iov, RmrTriplet localTarget, long cookie, RmrTriplet remote,
                          Set<CompletionFlag> flags) {
        if (localTarget == null) {
            Checked c = rdmaLocal(read, iov, remote);
            WorkRequest.Rdma spare = spareRdmas.get();
            return spare != null ? spare.reuse(read, c.iov, null, remote, c.length, cookie, flags)
                    : new WorkRequest.Rdma(read, c.iov, null, remote, c.length, cookie, flags);
        }
        if (remote == null) {
            throw DatException.invalidParameter(4, "no remote RMR triplet");
        }
        EpAttributes a = ep.attributes();
        long length = localTarget.length();
        if (length > a.maxRdmaSize()) {
            throw DatException.invalidParameter(2, "an RDMA of " + length + " bytes is over the EP's maximum "
                    + a.maxRdmaSize());
        }
        if (length > remote.length()) {
            throw new DatException(DatReturnType.LENGTH_ERROR, "the local side holds " + length
                    + " bytes, the remote triplet only " + remote.length());
        }
        return new WorkRequest.Rdma(read, null, localTarget, remote, length, cookie, flags);
    }

    /**
     * The checked local segments of an RDMA Read or Write (OBJ_08) with {@code remote}: at most the
     * EP's maximum RDMA size and no more than the remote triplet holds (LENGTH_ERROR); the EP's memo of
     * its last ones (one per direction) if {@code iov} is that same immutable list.
     */
    Checked rdmaLocal(boolean read, List<LmrTriplet> iov, RmrTriplet remote) {
        if (remote == null) {
            throw DatException.invalidParameter(4, "no remote RMR triplet");
        }
        Checked last = read ? rdmaRead : rdmaWritten;
        EmuPz pz = ep.pz();
        EpAttributes a = ep.attributes();
        int released = contexts.lmrsReleased();
        Checked c;
        if (last != null && last.iov == iov && last.pz == pz && last.attributes == a
                && last.lmrsReleased == released) {
            c = last;
        } else {
            List<LmrTriplet> checked = Segments.check(ia, pz, iov, read ? MemPriv.LOCAL_WRITE : MemPriv.LOCAL_READ,
                    a.maxRequestIov(), 2);
            c = new Checked(checked, Segments.total(checked), pz, a, released);
            if (checked == iov) {
                if (read) {
                    rdmaRead = c;
                } else {
                    rdmaWritten = c;
                }
            }
        }
        if (c.length > a.maxRdmaSize()) {
            throw DatException.invalidParameter(2, "an RDMA of " + c.length + " bytes is over the EP's maximum "
                    + a.maxRdmaSize());
        }
        if (c.length > remote.length()) {
            throw new DatException(DatReturnType.LENGTH_ERROR, "the local side holds " + c.length
                    + " bytes, the remote triplet only " + remote.length());
        }
        return c;
    }

    /**
     * The binding {@code dat_rmr_bind} makes of {@code [offset, offset + length)} of {@code region}, an
     * LMR of the EP's IA: an LMR of the EP's PZ, the range inside it, privileges the LMR grants; with a
     * fresh rmr_context.
     */
    EmuRmr.Binding binding(EmuLmr region, long offset, long length, Set<MemPriv> privileges, VaType vaType) {
        if (region.pz() != ep.pz()) {
            throw new DatException(DatReturnType.PROTECTION_VIOLATION, "the LMR and the RMR are of different PZs");
        }
        long size = region.segment().byteSize();
        if (offset < 0 || length < 0 || offset > size || length > size - offset) {
            throw DatException.invalidParameter(2, "[" + offset + ", +" + length + ") lies outside the LMR of "
                    + size + " bytes");
        }
        if (privileges == null || vaType == null) {
            throw DatException.invalidParameter(3, "privileges and VA type must be given");
        }
        if (!region.privileges().containsAll(privileges)) {
            throw new DatException(DatReturnType.PRIVILEGES_VIOLATION, "the LMR grants " + region.privileges()
                    + ", not " + privileges);
        }
        return new EmuRmr.Binding(region, offset, length, privileges, vaType, ep, contexts.newRmrContext());
    }
}
