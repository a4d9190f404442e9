package org.jdapl.provider.emu;

import org.jdapl.dat.AddressHandle;
import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.ExtensionType;

/**
 * The three EVDs of one EP and the events the EP queues on them: DTO and RMR bind completions on the
 * request and receive EVDs, connection events on the connection EVD. A completion that succeeded with
 * SUPPRESS queues nothing, an UNSIGNALLED one wakes nobody; a DTO completion goes to its EVD as its
 * values ({@link EmuEvd#enqueueDto}), and an EVD that goes over its length is reported by the IA
 * (OBJ_04). The EVDs' use counts follow every change ({@code dat_ep_create}, {@code dat_ep_modify},
 * free). Guarded by the IA's domain lock, or, for a loopback send's completions, by the sending EP's
 * {@link SendLock}. The EP's counters (DCNT_EP_*) are counted here, as its DTOs complete: every
 * accepted post completes once, its bytes when it succeeded; the writers of the request side are
 * ordered by the EP's send lock or the domain lock, those of the receive side by the peer's.
 */
public final class EpEvds {
    private final EmuEp ep;
    private final EmuIa ia;
    private EmuEvd recv;
    private EmuEvd request;
    private EmuEvd connect;
    /** The counters the EP's own posts and completions write (POST_*, CONNECT, DISCONNECT). */
    private final Counts counts = new Counts(IaCounts.EP_COUNTERS);
    /** The counters the peer's deliveries into the EP's receives write (RECV*), on the peer's thread. */
    private final Counts peerCounts = new Counts(IaCounts.EP_COUNTERS);

    EpEvds(EmuEp ep, EmuIa ia) {
        this.ep = ep;
        this.ia = ia;
    }

    /** The EP's EVDs become these (null: none); each old one is let go and each new one used. */
    void set(EmuEvd newRecv, EmuEvd newRequest, EmuEvd newConnect) {
        EmuEvd.changeUses(new EmuEvd[] {recv, request, connect}, new EmuEvd[] {newRecv, newRequest, newConnect});
        recv = newRecv;
        request = newRequest;
        connect = newConnect;
    }

    EmuEvd recv() {
        return recv;
    }

    EmuEvd request() {
        return request;
    }

    EmuEvd connect() {
        return connect;
    }

    /** The counters of the EP's own side. */
    Counts counts() {
        return counts;
    }

    /** The counters of its peer's deliveries. */
    Counts peerCounts() {
        return peerCounts;
    }

    /** A DTO of the request queue completed. */
    void requestCompleted(long cookie, int flagBits, DtoStatus status, long length, DtoOperation op) {
        int c = op == DtoOperation.SEND ? EpCounter.POST_SEND.ordinal()
                : op == DtoOperation.RDMA_WRITE ? EpCounter.POST_WRITE.ordinal() : EpCounter.POST_READ.ordinal();
        counts.inc(c);
        counts.add(c + 1, length);
        dto(request, cookie, flagBits, status, length, op, 0);
    }

    /** A receive completed. */
    void recvCompleted(long cookie, int flagBits, DtoStatus status, long length, DtoOperation op, int rmrContext) {
        if (status == DtoStatus.SUCCESS) {
            peerCounts.inc(EpCounter.RECV.ordinal());
            peerCounts.add(EpCounter.RECV_DATA.ordinal(), length);
        }
        dto(recv, cookie, flagBits, status, length, op, rmrContext);
    }

    /**
     * An extended DTO completed: at the requester ({@code recvSide} false) a fetch-and-add,
     * compare-and-swap, RDMA Write with immediate data or datagram send; at the responder an RDMA Write
     * with immediate data or a datagram that consumed a receive. Its event is an
     * {@link DatEvent.ExtendedDtoCompletion}.
     */
    public void extendedCompleted(boolean recvSide, long cookie, int flagBits, DtoStatus status, long length,
                           ExtensionType type, int immediateData, AddressHandle sender) {
        EpCounter c = switch (type) {
            case FETCH_AND_ADD -> EpCounter.POST_FETCH_ADD;
            case CMP_AND_SWAP -> EpCounter.POST_CMP_SWAP;
            case RDMA_WRITE_IMMED -> EpCounter.POST_WRITE_IMM;
            case UD_SEND -> EpCounter.POST_SEND_UD;
            case RDMA_WRITE_IMMED_DATA -> status == DtoStatus.SUCCESS ? EpCounter.RECV_RDMA_IMM : null;
            case UD_RECV -> status == DtoStatus.SUCCESS ? EpCounter.RECV_UD : null;
            default -> null;
        };
        if (c != null) {
            Counts side = recvSide ? peerCounts : counts;
            side.inc(c.ordinal());
            if (c != EpCounter.POST_FETCH_ADD && c != EpCounter.POST_CMP_SWAP) {
                side.add(c.ordinal() + 1, length);
            }
        }
        EmuEvd evd = recvSide ? recv : request;
        if (evd != null && reported(status, flagBits)) {
            ia.post(evd, new DatEvent.ExtendedDtoCompletion(evd, ep, cookie, status, length, type, immediateData,
                    sender), signalled(flagBits));
        }
    }

    /** A UD connection event of the EP ({@link DatEvent.UdConnection}), unless it has no connection EVD. */
    void udConnection(EventNumber number, ExtensionType type, AddressHandle remote, byte[] privateData) {
        if (connect != null && !ep.isFreed()) {
            ia.post(connect, new DatEvent.UdConnection(connect, number, ep, type, remote, null, privateData), true);
        }
    }

    /** An RMR bind posted on the EP completed. */
    void bindCompleted(WorkRequest.Bind bind, DtoStatus status) {
        if (request != null && reported(status, bind.flagBits())) {
            ia.post(request, new DatEvent.RmrBindCompletion(request, bind.rmr, bind.cookie, status),
                    signalled(bind.flagBits()));
        }
    }

    /** A connection event of the EP, unless it has no connection EVD or was freed. */
    void connection(EventNumber number, byte[] privateData) {
        if (connect != null && !ep.isFreed()) {
            ia.post(connect, new DatEvent.Connection(connect, number, ep, privateData), true);
        }
    }

    private void dto(EmuEvd evd, long cookie, int flagBits, DtoStatus status, long length, DtoOperation op,
                     int rmrContext) {
        if (evd != null && reported(status, flagBits)
                && evd.enqueueDto(ep, cookie, status, length, op, rmrContext, signalled(flagBits))) {
            ia.overflowed(evd);
        }
    }

    /** Whether a completion is queued at all: not one that succeeded with SUPPRESS. */
    private static boolean reported(DtoStatus status, int flagBits) {
        return status != DtoStatus.SUCCESS || !WorkRequest.has(flagBits, CompletionFlag.SUPPRESS);
    }

    /** Whether a queued completion wakes waiters: not an UNSIGNALLED one. */
    private static boolean signalled(int flagBits) {
        return !WorkRequest.has(flagBits, CompletionFlag.UNSIGNALLED);
    }
}
