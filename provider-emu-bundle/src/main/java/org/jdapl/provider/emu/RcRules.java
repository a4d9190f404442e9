package org.jdapl.provider.emu;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.MemPriv;

/**
 * The rules of a reliable connection (an InfiniBand RC queue pair) that both fabrics apply: what a
 * responder does with an incoming send or RDMA, and how long a send retries while the responder has
 * no receive (RNR). The loopback link applies them to the peer EP directly; the tcp link to the frames
 * it reads. Every method runs under the responder's (or initiator's) domain lock.
 *
 * <p>Errors follow RC: any error completion breaks the connection (the caller breaks it), so both ends
 * get CONNECTION_BROKEN and the DTOs after it are flushed.
 */
public final class RcRules {
    private RcRules() {
    }

    /**
     * What the responder made of an incoming send: a caller-owned verdict that each
     * {@link #takeReceive(EmuEp, long, boolean, long, SendVerdict)} fills again (so that a responder
     * allocates none per message), or the shared {@link #RNR}.
     */
    public static final class SendVerdict {
        /** No receive was posted: the sender is told RNR (never filled). */
        static final SendVerdict RNR = new SendVerdict();

        private WorkRequest.Recv recv;
        private DtoOperation op = DtoOperation.RECEIVE;
        private int invalidated;
        private DtoStatus recvStatus;
        private DtoStatus senderStatus;

        /** An empty verdict for {@link #takeReceive(EmuEp, long, boolean, long, SendVerdict)} to fill. */
        public SendVerdict() {
        }

        private SendVerdict set(WorkRequest.Recv r, DtoOperation o, int inv, DtoStatus rs, DtoStatus ss) {
            this.recv = r;
            this.op = o;
            this.invalidated = inv;
            this.recvStatus = rs;
            this.senderStatus = ss;
            return this;
        }

        /** The receive the send consumed, or null when none was posted (RNR). */
        public WorkRequest.Recv recv() {
            return recv;
        }

        /** The receive's operation (RECEIVE or RECEIVE_WITH_INVALIDATE). */
        public DtoOperation op() {
            return op;
        }

        /** The rmr_context the send invalidated, or 0. */
        public int invalidated() {
            return invalidated;
        }

        /** SUCCESS, or the error the receive completes with. */
        public DtoStatus recvStatus() {
            return recvStatus;
        }

        /** SUCCESS, or the error the send completes with. */
        public DtoStatus senderStatus() {
            return senderStatus;
        }

        /** Whether the data may move into the receive. */
        public boolean accepted() {
            return recv != null && recvStatus == DtoStatus.SUCCESS;
        }
    }

    /**
     * The responder takes its next receive for a send of {@code length} bytes (OBJ_07): the receive
     * must still be registered (else DTO_ERR_LOCAL_PROTECTION at the receiver), hold the message (else
     * DTO_ERR_LOCAL_LENGTH; the sender gets REMOTE_RESPONDER), and a send with invalidate must name an
     * RMR the responder's EP may use (else both get REMOTE_ACCESS). The receive is consumed in every
     * case but RNR.
     *
     * @param rmrContext the context a send with invalidate names (a value over 32 bits names none)
     */
    public static SendVerdict takeReceive(EmuEp responder, long length, boolean invalidate, long rmrContext) {
        return takeReceive(responder, length, invalidate, rmrContext, new SendVerdict());
    }

    /**
     * {@link #takeReceive(EmuEp, long, boolean, long)} into the caller's verdict {@code into}, which
     * it returns filled, or {@link SendVerdict#RNR}.
     */
    public static SendVerdict takeReceive(EmuEp responder, long length, boolean invalidate, long rmrContext,
                                          SendVerdict into) {
        WorkRequest.Recv recv = responder.queues().nextReceive();
        if (recv == null) {
            return SendVerdict.RNR;
        }
        responder.queues().takeReceive();
        if (!Segments.usable(recv.iov)) {
            return into.set(recv, DtoOperation.RECEIVE, 0, DtoStatus.LOCAL_PROTECTION,
                    DtoStatus.REMOTE_RESPONDER);
        }
        if (length > recv.capacity) {
            return into.set(recv, DtoOperation.RECEIVE, 0, DtoStatus.LOCAL_LENGTH,
                    DtoStatus.REMOTE_RESPONDER);
        }
        if (!invalidate) {
            return into.set(recv, DtoOperation.RECEIVE, 0, DtoStatus.SUCCESS, DtoStatus.SUCCESS);
        }
        if ((rmrContext >>> 32) != 0 || !responder.ia().contexts().invalidateRmr((int) rmrContext, responder)) {
            return into.set(recv, DtoOperation.RECEIVE_WITH_INVALIDATE, 0, DtoStatus.REMOTE_ACCESS,
                    DtoStatus.REMOTE_ACCESS);
        }
        return into.set(recv, DtoOperation.RECEIVE_WITH_INVALIDATE, (int) rmrContext, DtoStatus.SUCCESS,
                DtoStatus.SUCCESS);
    }

    /**
     * Whether a receive of {@code capacity} bytes into {@code recvIov} takes a send of {@code length}
     * bytes from {@code sendIov} (without invalidate) successfully (OBJ_07): both sides' memory still
     * registered, and the message within the receive.
     */
    public static boolean acceptsAtOnce(List<LmrTriplet> sendIov, long length, long capacity,
                                        List<LmrTriplet> recvIov) {
        return length <= capacity && Segments.usable(sendIov) && Segments.usable(recvIov);
    }

    /**
     * The responder's memory an RDMA names (LMR_04, LMR_05, LMR_06): the context must be live (a value
     * over 32 bits names none), of the responder EP's PZ and scope, grant the privilege and hold
     * {@code [address, address + length)}. Behaviours: LMR_04, LMR_05, LMR_06.
     *
     * @return the bytes, or null: the request fails DTO_ERR_REMOTE_ACCESS and the connection breaks
     */
    public static MemorySegment remoteMemory(EmuEp responder, long rmrContext, long address, long length, boolean read) {
        if ((rmrContext >>> 32) != 0) {
            return null;
        }
        return responder.ia().contexts().resolve((int) rmrContext, responder, address, length,
                read ? MemPriv.REMOTE_READ : MemPriv.REMOTE_WRITE);
    }

    /** Where the bytes of an incoming RDMA Write go: a part of a segment, named without making a slice. */
    @FunctionalInterface
    public interface Placement {
        void place(MemorySegment segment, long offset, long length);
    }

    /**
     * The responder's memory an RDMA Write names, checked as {@link #remoteMemory} checks it, handed to
     * {@code to} as the registered segment and an offset in it (no slice is made). Behaviours: LMR_04,
     * LMR_05, LMR_06.
     *
     * @return false if the access is refused: the request fails DTO_ERR_REMOTE_ACCESS and the connection breaks
     */
    public static boolean placeRemoteWrite(EmuEp responder, long rmrContext, long address, long length,
                                           Placement to) {
        if ((rmrContext >>> 32) != 0) {
            return false;
        }
        RemoteTarget target = responder.ia().contexts().target((int) rmrContext);
        long at = target == null ? -1 : target.locate(responder, address, length, MemPriv.REMOTE_WRITE);
        if (at < 0) {
            return false;
        }
        to.place(target.backing(), at, length);
        return true;
    }

    /**
     * A send found no receive at the responder (RNR). Its retry window of
     * {@link EmuLimits#RNR_RETRY_MILLIS} starts with the first refusal.
     *
     * @return true if the window has run out: the send completes DTO_ERR_RECEIVER_NOT_READY
     */
    public static boolean rnrExhausted(WorkRequest.Send send, long now) {
        if (send.rnrDeadline == 0) {
            send.rnrDeadline = now + TimeUnit.MILLISECONDS.toNanos(EmuLimits.RNR_RETRY_MILLIS);
            return false;
        }
        return now - send.rnrDeadline >= 0;
    }

    /**
     * Has {@code retry} run on the IA's timer thread once the send's window ends (plus {@code slackNanos}),
     * unless a retry is already due; a receive posted earlier retries at once through the link.
     */
    public static void retryAtDeadline(EmuEp initiator, WorkRequest.Send send, long now, long slackNanos, Runnable retry) {
        if (send.rnrTimerArmed) {
            return;
        }
        send.rnrTimerArmed = true;
        initiator.ia().schedule(send.rnrDeadline - now + slackNanos, () -> {
            send.rnrTimerArmed = false;
            if (!initiator.isFreed()) {
                retry.run();
            }
        });
    }

    /**
     * The responder's next receive, which an RDMA Write with immediate data consumes once its target
     * is checked ({@link #takeImmediateReceive}), or null when none is posted (RNR). Its buffer is not
     * written. Behaviours: EXT_05.
     */
    public static WorkRequest.Recv nextImmediateReceive(EmuEp responder) {
        return responder.queues().nextReceive();
    }

    /** Takes the receive {@link #nextImmediateReceive} gave off its queue. */
    public static void takeImmediateReceive(EmuEp responder) {
        responder.queues().takeReceive();
    }

    /** As {@link #rnrExhausted(WorkRequest.Send, long)} for an RDMA Write with immediate data. */
    public static boolean rnrExhausted(WorkRequest.Ext write, long now) {
        if (write.rnrDeadline == 0) {
            write.rnrDeadline = now + TimeUnit.MILLISECONDS.toNanos(EmuLimits.RNR_RETRY_MILLIS);
            return false;
        }
        return now - write.rnrDeadline >= 0;
    }

    /** As {@link #retryAtDeadline(EmuEp, WorkRequest.Send, long, long, Runnable)} for an RDMA Write with immediate data. */
    public static void retryAtDeadline(EmuEp initiator, WorkRequest.Ext write, long now, long slackNanos,
                                       Runnable retry) {
        if (write.rnrTimerArmed) {
            return;
        }
        write.rnrTimerArmed = true;
        initiator.ia().schedule(write.rnrDeadline - now + slackNanos, () -> {
            write.rnrTimerArmed = false;
            if (!initiator.isFreed()) {
                retry.run();
            }
        });
    }
}
