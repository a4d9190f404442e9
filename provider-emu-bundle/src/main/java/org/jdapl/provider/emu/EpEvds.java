package org.jdapl.provider.emu;

import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EventNumber;

/**
 * The three EVDs of one EP and the events the EP queues on them: DTO and RMR bind completions on the
 * request and receive EVDs, connection events on the connection EVD. A completion that succeeded with
 * SUPPRESS queues nothing, an UNSIGNALLED one wakes nobody; a DTO completion goes to its EVD as its
 * values ({@link EmuEvd#enqueueDto}), and an EVD that goes over its length is reported by the IA
 * (OBJ_04). The EVDs' use counts follow every change ({@code dat_ep_create}, {@code dat_ep_modify},
 * free). Guarded by the IA's domain lock, or, for a loopback send's completions, by the sending EP's
 * {@link SendLock}.
 */
final class EpEvds {
    private final EmuEp ep;
    private final EmuIa ia;
    private EmuEvd recv;
    private EmuEvd request;
    private EmuEvd connect;

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

    /** A DTO of the request queue completed. */
    void requestCompleted(long cookie, int flagBits, DtoStatus status, long length, DtoOperation op) {
        dto(request, cookie, flagBits, status, length, op, 0);
    }

    /** A receive completed. */
    void recvCompleted(long cookie, int flagBits, DtoStatus status, long length, DtoOperation op, int rmrContext) {
        dto(recv, cookie, flagBits, status, length, op, rmrContext);
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
