package org.jdapl.provider.emu.tcp;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Iterator;

import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.MemPriv;
import org.jdapl.provider.emu.EmuEp;
import org.jdapl.provider.emu.EmuLimits;
import org.jdapl.provider.emu.RcRules;
import org.jdapl.provider.emu.Segments;
import org.jdapl.provider.emu.WorkRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reliable-connection engine of one established tcp connection (PROTOCOL.md, "Data"): the local
 * EP's requests go out as SEND, RDMA_WRITE and RDMA_READ_REQ frames in order and complete in order
 * when the peer's ACK, NAK or read response arrives; the peer's frames are checked with the
 * {@link RcRules} (receive, length, protection, invalidate; rmr_context, privilege, bounds) before a
 * byte is written, and answered. Nothing is transmitted after a SEND until it is answered, so a SEND
 * refused for want of a receive (RNR NAK) is sent again without reordering. The connection
 * ({@link TcpConnection}) owns the socket and the frame codec, {@link TcpHandshake} the handshake; this
 * class owns sequence numbers and what is in flight. Everything runs under the IA's domain lock.
 */
final class TcpRcEngine {
    private static final Logger LOG = LoggerFactory.getLogger(TcpRcEngine.class);
    private static final int MAX_READS_IN_FLIGHT = EmuLimits.MAX_RDMA_READ_PER_EP;

    private final TcpConnection c;
    // requests of the local EP
    private long nextSeq = 1;
    private int sent;
    private boolean sendOutstanding;
    private int readsInFlight;
    // requests of the peer
    private long expectedSeq = 1;
    private boolean rnrNaked;
    private int readResponsesQueued;
    private WorkRequest.Recv inbound;
    private DtoOperation inboundOp;
    private int inboundInvalidated;

    TcpRcEngine(TcpConnection c) {
        this.c = c;
    }

    /** Completes the EP's leading binds and transmits its requests as far as they may go. */
    void pump(EmuEp from) {
        completeLeadingBinds();
        if (!c.ia().held()) {
            transmit();
        }
        if (from.requests().isEmpty()) {
            from.connection().tryFinishGraceful();
        }
    }

    /** A receive was posted: a peer told RNR may send again. */
    void receivePosted() {
        if (rnrNaked) {
            rnrNaked = false;
            c.enqueue(Frame.RECV_POSTED, 0, 0, 0, 0, 0, 0, null);
            c.flush();
        }
    }

    /** A read response left the output queue. */
    void readResponseWritten() {
        readResponsesQueued--;
    }

    /**
     * A data frame's payload is complete: a receive completes and is ACKed, an RDMA Write ACKed, a read
     * response completes the read (LOCAL_PROTECTION if its local memory went away meanwhile). Answers
     * leave with the next frame or before the polling thread blocks.
     *
     * @param undelivered whether the payload had nowhere to go
     */
    void frameEnd(Frame.Header h, boolean undelivered) {
        switch (h.type()) {
            case Frame.SEND -> {
                WorkRequest.Recv recv = inbound;
                if (recv != null) {
                    inbound = null;
                    c.enqueue(Frame.ACK, 0, 0, h.seq(), 0, 0, 0, null);
                    c.ep().completeRecv(recv, DtoStatus.SUCCESS, h.length(), inboundOp, inboundInvalidated);
                }
                c.fabric().flushLater(c);
            }
            case Frame.RDMA_WRITE -> {
                c.enqueue(Frame.ACK, 0, 0, h.seq(), 0, 0, 0, null);
                c.fabric().flushLater(c);
            }
            case Frame.RDMA_READ_REQ -> c.fabric().flushLater(c);
            case Frame.RDMA_READ_RESP -> {
                WorkRequest head = c.ep().requests().peekFirst();
                if (undelivered && h.length() > 0) {
                    sent--;
                    readsInFlight--;
                    c.ep().fail(head, DtoStatus.LOCAL_PROTECTION);
                } else {
                    requestDone(head, DtoStatus.SUCCESS);
                }
            }
            default -> {
            }
        }
    }

    private void transmit() {
        ArrayDeque<WorkRequest> requests = c.ep().requests();
        Iterator<WorkRequest> it = requests.iterator();
        for (int i = 0; i < sent && it.hasNext(); i++) {
            it.next();
        }
        boolean queued = false;
        while (it.hasNext() && !sendOutstanding && c.hasQueueRoom()) {
            WorkRequest wr = it.next();
            switch (wr) {
                case WorkRequest.Bind bind -> sent++;
                case WorkRequest.Send send -> {
                    if (send.rnrDeadline != 0 && !send.rnrRetry) {
                        return;
                    }
                    if (!Segments.usable(send.iov)) {
                        failWhenHead(wr);
                        return;
                    }
                    send.rnrRetry = false;
                    if (send.rnrDeadline == 0) {
                        send.seq = nextSeq++;
                    }
                    int flags = (send.invalidate ? Frame.FLAG_INVALIDATE : 0)
                            | (send.has(CompletionFlag.SOLICITED_WAIT) ? Frame.FLAG_SOLICITED : 0);
                    c.enqueue(Frame.SEND, flags, 0, send.seq, send.rmrContext & 0xffff_ffffL, 0, 0, send.length,
                            send.iov);
                    sent++;
                    sendOutstanding = true;
                    queued = true;
                }
                case WorkRequest.Rdma rdma -> {
                    if (rdma.read) {
                        if (readsInFlight >= MAX_READS_IN_FLIGHT
                                || (rdma.has(CompletionFlag.BARRIER_FENCE) && readsInFlight > 0)) {
                            flushIf(queued);
                            return;
                        }
                        if (rdma.iov != null && !Segments.usable(rdma.iov)) {
                            failWhenHead(wr);
                            return;
                        }
                        rdma.seq = nextSeq++;
                        c.enqueue(Frame.RDMA_READ_REQ, 0, 0, rdma.seq, rdma.remote.rmrContext() & 0xffff_ffffL,
                                rdma.remote.targetAddress(), rdma.length, null);
                        readsInFlight++;
                    } else {
                        if (rdma.has(CompletionFlag.BARRIER_FENCE) && readsInFlight > 0) {
                            flushIf(queued);
                            return;
                        }
                        if (!Segments.usable(rdma.iov)) {
                            failWhenHead(wr);
                            return;
                        }
                        rdma.seq = nextSeq++;
                        c.enqueue(Frame.RDMA_WRITE, 0, 0, rdma.seq, rdma.remote.rmrContext() & 0xffff_ffffL,
                                rdma.remote.targetAddress(), 0, rdma.length, rdma.iov);
                    }
                    sent++;
                    queued = true;
                }
                case WorkRequest.Recv recv -> throw new IllegalStateException("a receive in the request queue");
                case WorkRequest.Ext ext -> throw new IllegalStateException("an extended DTO on a tcp connection");
            }
        }
        flushIf(queued);
    }

    private void flushIf(boolean queued) {
        if (queued) {
            c.flush();
        }
    }

    /** A request whose local memory is gone fails LOCAL_PROTECTION once everything before it completed. */
    private void failWhenHead(WorkRequest wr) {
        if (sent == 0 && c.ep().requests().peekFirst() == wr) {
            c.ep().fail(wr, DtoStatus.LOCAL_PROTECTION);
        }
    }

    private void completeLeadingBinds() {
        ArrayDeque<WorkRequest> requests = c.ep().requests();
        while (true) {
            WorkRequest head = requests.peekFirst();
            if (!(head instanceof WorkRequest.Bind bind)) {
                return;
            }
            requests.pollFirst();
            if (sent > 0) {
                sent--;
            }
            c.ep().completeRequest(bind, DtoStatus.SUCCESS, 0);
        }
    }

    void header(Frame.Header h) throws Frame.ProtocolException {
        switch (h.type()) {
            case Frame.SEND -> {
                checkSeq(h);
                boolean invalidate = (h.flags() & Frame.FLAG_INVALIDATE) != 0;
                RcRules.SendVerdict v = RcRules.takeReceive(c.ep(), h.length(), invalidate,
                        h.a());
                if (v.recv() == null) {
                    rnrNaked = true;
                    c.enqueue(Frame.NAK, 0, Frame.NAK_RNR, h.seq(), 0, 0, 0, null);
                    return;
                }
                expectedSeq++;
                if (!v.accepted()) {
                    responderError(v, h.seq());
                    return;
                }
                WorkRequest.Recv recv = v.recv();
                inbound = recv;
                inboundOp = v.op();
                inboundInvalidated = v.invalidated();
                for (LmrTriplet t : recv.iov) {
                    c.input().destination().add(t.lmr().segment().asSlice(t.offset(), t.length()));
                }
            }
            case Frame.RDMA_WRITE -> {
                checkSeq(h);
                expectedSeq++;
                MemorySegment target = RcRules.remoteMemory(c.ep(), h.a(), h.b(), h.length(), false);
                if (target == null) {
                    remoteAccessViolation(h, "RDMA Write");
                    return;
                }
                c.input().destination().add(target);
            }
            case Frame.RDMA_READ_REQ -> {
                checkSeq(h);
                expectedSeq++;
                if (readResponsesQueued >= MAX_READS_IN_FLIGHT) {
                    throw TcpConnection.violation("more than " + MAX_READS_IN_FLIGHT + " RDMA Reads in flight");
                }
                MemorySegment source = RcRules.remoteMemory(c.ep(), h.a(), h.b(), h.c(), true);
                if (source == null) {
                    remoteAccessViolation(h, "RDMA Read");
                    return;
                }
                readResponsesQueued++;
                c.enqueue(Frame.RDMA_READ_RESP, 0, 0, h.seq(), 0, 0, 0, h.c(), source);
            }
            case Frame.RDMA_READ_RESP -> {
                WorkRequest head = inFlightHead(h);
                if (!(head instanceof WorkRequest.Rdma rdma) || !rdma.read) {
                    throw TcpConnection.violation("a read response for request " + h.seq() + ", which is no RDMA Read");
                }
                if (h.length() != rdma.length) {
                    throw TcpConnection.violation("a read response of " + h.length() + " bytes for a read of "
                            + rdma.length);
                }
                if (rdma.iov != null) {
                    if (Segments.usable(rdma.iov)) {
                        c.input().destination().addAll(Segments.slices(rdma.iov));
                    }
                } else {
                    MemorySegment sink = c.ia().contexts().resolve(rdma.localTarget.rmrContext(), c.ep(),
                            rdma.localTarget.targetAddress(), rdma.length, MemPriv.REMOTE_WRITE);
                    if (sink != null) {
                        c.input().destination().add(sink);
                    }
                }
            }
            case Frame.ACK -> {
                WorkRequest head = inFlightHead(h);
                if (head instanceof WorkRequest.Rdma rdma && rdma.read) {
                    throw TcpConnection.violation("an ACK for RDMA Read " + h.seq());
                }
                requestDone(head, DtoStatus.SUCCESS);
            }
            case Frame.NAK -> nak(h);
            case Frame.RECV_POSTED -> {
                if (c.ep().requests().peekFirst() instanceof WorkRequest.Send send && sent == 0
                        && send.rnrDeadline != 0) {
                    send.rnrRetry = true;
                    c.ep().pumpRequests();
                }
            }
            case Frame.DISCONNECT -> c.ep().connection().peerDisconnectNotification();
            case Frame.ABORT -> c.input().expectControl();
            default -> throw TcpConnection.violation(Frame.name(h.type()) + " on an established connection");
        }
    }

    private void checkSeq(Frame.Header h) throws Frame.ProtocolException {
        if (h.seq() != expectedSeq) {
            throw TcpConnection.violation(Frame.name(h.type()) + " with sequence number " + h.seq() + ", expected "
                    + expectedSeq);
        }
    }

    /** The head of the EP's transmitted requests, which the answer {@code h} must name. */
    private WorkRequest inFlightHead(Frame.Header h) throws Frame.ProtocolException {
        WorkRequest head = c.ep().requests().peekFirst();
        if (sent == 0 || head == null || head instanceof WorkRequest.Bind || head.seq != h.seq()) {
            throw TcpConnection.violation(Frame.name(h.type()) + " for request " + h.seq()
                    + ", which is not the oldest in flight");
        }
        return head;
    }

    private void requestDone(WorkRequest head, DtoStatus status) {
        long length = switch (head) {
            case WorkRequest.Send s -> s.length;
            case WorkRequest.Rdma r -> r.length;
            default -> 0;
        };
        c.ep().requests().pollFirst();
        sent--;
        if (head instanceof WorkRequest.Send) {
            sendOutstanding = false;
        }
        if (head instanceof WorkRequest.Rdma r && r.read) {
            readsInFlight--;
        }
        c.ep().completeRequest(head, status, status == DtoStatus.SUCCESS ? length : 0);
        c.ep().pumpRequests();
    }

    private void nak(Frame.Header h) throws Frame.ProtocolException {
        WorkRequest head = inFlightHead(h);
        if (h.status() == Frame.NAK_RNR) {
            if (!(head instanceof WorkRequest.Send send)) {
                throw TcpConnection.violation("an RNR NAK for request " + h.seq() + ", which is no send");
            }
            long now = System.nanoTime();
            sent--;
            sendOutstanding = false;
            if (RcRules.rnrExhausted(send, now)) {
                c.ep().fail(send, DtoStatus.RECEIVER_NOT_READY);
                return;
            }
            send.rnrRetry = false;
            EmuEp owner = c.ep();
            RcRules.retryAtDeadline(owner, send, now, 0, () -> {
                send.rnrRetry = true;
                owner.pumpRequests();
            });
            return;
        }
        DtoStatus status = h.status() == Frame.NAK_REMOTE_ACCESS ? DtoStatus.REMOTE_ACCESS : DtoStatus.REMOTE_RESPONDER;
        sent--;
        sendOutstanding = false;
        if (head instanceof WorkRequest.Rdma r && r.read) {
            readsInFlight--;
        }
        c.ep().fail(head, status);
    }

    /** A receive could not take the message: it completes with an error, the sender is NAKed, the link breaks. */
    private void responderError(RcRules.SendVerdict v, long seq) {
        c.ep().completeRecv(v.recv(), v.recvStatus(), 0, v.op(), 0);
        int nak = v.senderStatus() == DtoStatus.REMOTE_ACCESS ? Frame.NAK_REMOTE_ACCESS : Frame.NAK_REMOTE_RESPONDER;
        c.enqueue(Frame.NAK, 0, nak, seq, 0, 0, 0, null);
        c.input().dropFrame();
        c.ep().connection().breakLink();
    }

    private void remoteAccessViolation(Frame.Header h, String what) {
        LOG.warn("IA {}: {} from {} refused (rmr_context 0x{}, address 0x{}, {} bytes): the connection breaks",
                c.ia().name(), what, c.remoteLabel(), Long.toHexString(h.a()), Long.toHexString(h.b()),
                h.type() == Frame.RDMA_READ_REQ ? h.c() : h.length());
        c.enqueue(Frame.NAK, 0, Frame.NAK_REMOTE_ACCESS, h.seq(), 0, 0, 0, null);
        c.input().dropFrame();
        c.ep().connection().breakLink();
    }

    /** Completes a receive that was filling when the connection ended (FLUSHED, before any later receive). */
    void completeInbound() {
        WorkRequest.Recv r = inbound;
        if (r != null) {
            inbound = null;
            c.ep().completeRecv(r, DtoStatus.FLUSHED, 0, DtoOperation.RECEIVE, 0);
        }
    }
}
