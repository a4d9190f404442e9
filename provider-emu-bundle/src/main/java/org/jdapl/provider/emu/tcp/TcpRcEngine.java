package org.jdapl.provider.emu.tcp;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.function.BiConsumer;

import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.MemPriv;
import org.jdapl.provider.emu.Contexts;
import org.jdapl.provider.emu.EmuEp;
import org.jdapl.provider.emu.EmuIa;
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
 * refused for want of a receive (RNR NAK) is sent again without reordering. The input hands the
 * frames of the established connection straight to this engine, which writes its frames straight to
 * the output; the connection keeps the socket and its lifecycle,
 * {@link TcpHandshake} the handshake before; this class owns sequence numbers and what is in flight.
 * Everything runs under the IA's domain lock.
 *
 * <p>OFED's extended DTOs (FETCH_ADD, CMP_SWAP, RDMA_WRITE_IMM) go through the same sequence and
 * in-flight bookkeeping as the RC operations (an atomic counts as a read, an RDMA Write with immediate
 * data as a send), which is why their cases are here and the file is over 500 lines: that bookkeeping
 * is one state machine, readable top to bottom in one place; {@link TcpExtensions} has the rest.
 */
final class TcpRcEngine implements TcpInput.Handler {
    private static final Logger LOG = LoggerFactory.getLogger(TcpRcEngine.class);
    private static final int MAX_READS_IN_FLIGHT = EmuLimits.MAX_RDMA_READ_PER_EP;

    private final EmuEp ep;
    private final EmuIa ia;
    private final Contexts contexts;
    private final TcpOutput out;
    private final TcpInput in;
    /** Answers leave with the next frame, or before the polling thread blocks (the fabric's flush later). */
    private final Runnable answerLater;
    /** The peer's ABORT: the connection ends. */
    private final BiConsumer<Frame, byte[]> aborted;
    private final String remoteLabel;
    // requests of the local EP
    private long nextSeq = 1;
    private int sent;
    private boolean sendOutstanding;
    private int readsInFlight;
    // requests of the peer
    private long expectedSeq = 1;
    private boolean rnrNaked;
    private WorkRequest.Recv inbound;
    /** The receive being filled was taken by an RDMA Write with immediate data. */
    private boolean inboundImmediate;
    private DtoOperation inboundOp;
    private int inboundInvalidated;
    /** What the responder made of the peer's last SEND (filled again for each). */
    private final RcRules.SendVerdict verdict = new RcRules.SendVerdict();
    /** The value an atomic of the peer fetched. */
    private final long[] fetched = new long[1];

    /**
     * The engine of {@code ep}'s established connection: frames go to {@code out}, the payloads of the
     * peer's frames are placed through {@code in}, the peer's RDMA is checked against {@code contexts}.
     */
    TcpRcEngine(EmuEp ep, EmuIa ia, Contexts contexts, TcpOutput out, TcpInput in, Runnable answerLater,
                BiConsumer<Frame, byte[]> aborted, String remoteLabel) {
        this.ep = ep;
        this.ia = ia;
        this.contexts = contexts;
        this.out = out;
        this.in = in;
        this.answerLater = answerLater;
        this.aborted = aborted;
        this.remoteLabel = remoteLabel;
    }

    /** Completes the EP's leading binds and transmits its requests as far as they may go. */
    void pump(EmuEp from) {
        completeLeadingBinds();
        if (!ia.held()) {
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
            out.enqueue(out.frame().recvPosted());
            out.flush();
        }
    }

    /**
     * A frame's payload is complete: a receive completes and is ACKed, an RDMA Write ACKed, a read
     * response completes the read (LOCAL_PROTECTION if its local memory went away meanwhile), an
     * ABORT ends the connection. Answers leave with the next frame or before the polling thread blocks.
     */
    @Override
    public void frameEnd(Frame h, byte[] control) {
        boolean undelivered = !in.hasDestination();
        switch (h.type()) {
            case ABORT -> aborted.accept(h, control);
            case SEND -> {
                WorkRequest.Recv recv = inbound;
                if (recv != null) {
                    inbound = null;
                    out.enqueue(out.frame().ack(h.seq()));
                    ep.completeRecv(recv, DtoStatus.SUCCESS, h.length(), inboundOp, inboundInvalidated);
                    ep.recycle(recv);
                }
                answerLater.run();
            }
            case RDMA_WRITE -> {
                out.enqueue(out.frame().ack(h.seq()));
                answerLater.run();
            }
            case RDMA_WRITE_IMM -> {
                WorkRequest.Recv recv = inbound;
                if (recv != null) {
                    inbound = null;
                    out.enqueue(out.frame().ack(h.seq()));
                    ep.completeRecvImmediate(recv, DtoStatus.SUCCESS, h.length(), h.immediateData());
                }
                answerLater.run();
            }
            case CMP_SWAP -> atomic(h, TcpExtensions.swapValue(control));
            case RDMA_READ_REQ -> answerLater.run();
            case RDMA_READ_RESP -> {
                WorkRequest head = ep.requests().peekFirst();
                if (undelivered && h.length() > 0) {
                    sent--;
                    readsInFlight--;
                    ep.fail(head, DtoStatus.LOCAL_PROTECTION);
                } else {
                    requestDone(head, DtoStatus.SUCCESS);
                }
            }
            default -> {
            }
        }
    }

    /** What {@link #step} did with a request. */
    private static final int NEXT = 0;
    private static final int QUEUED = 1;
    /** Transmission stops here; frames queued before are flushed. */
    private static final int STOP_FLUSH = 2;
    /** Transmission stops here (a send waits for its RNR retry, or a request fails once it is the head). */
    private static final int STOP = 3;

    /**
     * Transmits the requests after the {@code sent} ones as far as they may go. The newest alone (the
     * common case: one post, or the answer of the one before) is taken without an iterator.
     */
    private void transmit() {
        ArrayDeque<WorkRequest> requests = ep.requests();
        int waiting = requests.size() - sent;
        if (waiting <= 0 || sendOutstanding || !out.hasRoom()) {
            return;
        }
        if (waiting == 1) {
            flushIf(step(requests.peekLast()) == QUEUED);
            return;
        }
        Iterator<WorkRequest> it = requests.iterator();
        for (int i = 0; i < sent && it.hasNext(); i++) {
            it.next();
        }
        boolean queued = false;
        while (it.hasNext() && !sendOutstanding && out.hasRoom()) {
            int r = step(it.next());
            if (r == STOP) {
                return;
            }
            if (r == STOP_FLUSH) {
                break;
            }
            queued |= r == QUEUED;
        }
        flushIf(queued);
    }

    /** Transmits {@code wr}, the next request not yet sent, if it may go now. */
    private int step(WorkRequest wr) {
        switch (wr) {
            case WorkRequest.Bind bind -> {
                sent++;
                return NEXT;
            }
            case WorkRequest.Send send -> {
                if (send.rnrDeadline != 0 && !send.rnrRetry) {
                    return STOP;
                }
                if (!Segments.usable(send.iov)) {
                    failWhenHead(wr);
                    return STOP;
                }
                send.rnrRetry = false;
                if (send.rnrDeadline == 0) {
                    send.seq = nextSeq++;
                }
                out.enqueue(out.frame().send(send.seq, send.invalidate, send.rmrContext,
                        send.has(CompletionFlag.SOLICITED_WAIT), send.length, send.iov));
                sent++;
                sendOutstanding = true;
                return QUEUED;
            }
            case WorkRequest.Rdma rdma -> {
                if (rdma.read) {
                    if (readsInFlight >= MAX_READS_IN_FLIGHT
                            || (rdma.has(CompletionFlag.BARRIER_FENCE) && readsInFlight > 0)) {
                        return STOP_FLUSH;
                    }
                    if (rdma.iov != null && !Segments.usable(rdma.iov)) {
                        failWhenHead(wr);
                        return STOP;
                    }
                    rdma.seq = nextSeq++;
                    out.enqueue(out.frame().rdmaReadRequest(rdma.seq, rdma.remote.rmrContext(),
                            rdma.remote.targetAddress(), rdma.length));
                    readsInFlight++;
                } else {
                    if (rdma.has(CompletionFlag.BARRIER_FENCE) && readsInFlight > 0) {
                        return STOP_FLUSH;
                    }
                    if (!Segments.usable(rdma.iov)) {
                        failWhenHead(wr);
                        return STOP;
                    }
                    rdma.seq = nextSeq++;
                    out.enqueue(out.frame().rdmaWrite(rdma.seq, rdma.remote.rmrContext(),
                            rdma.remote.targetAddress(), rdma.length, rdma.iov));
                }
                sent++;
                return QUEUED;
            }
            case WorkRequest.Ext ext -> {
                return stepExtended(ext);
            }
            case WorkRequest.Recv recv -> throw new IllegalStateException("a receive in the request queue");
        }
    }

    /** Transmits an extended DTO: an atomic as a read goes, an RDMA Write with immediate data as a send. */
    private int stepExtended(WorkRequest.Ext ext) {
        boolean atomic = TcpExtensions.isAtomic(ext);
        if (!atomic && ext.rnrDeadline != 0 && !ext.rnrRetry) {
            return STOP;
        }
        if ((atomic && readsInFlight >= MAX_READS_IN_FLIGHT)
                || (ext.has(CompletionFlag.BARRIER_FENCE) && readsInFlight > 0)) {
            return STOP_FLUSH;
        }
        if (!Segments.usable(ext.iov)) {
            failWhenHead(ext);
            return STOP;
        }
        if (atomic) {
            readsInFlight++;
        } else {
            ext.rnrRetry = false;
            sendOutstanding = true;
        }
        if (atomic || ext.rnrDeadline == 0) {
            ext.seq = nextSeq++;
        }
        out.enqueue(TcpExtensions.frame(out, ext));
        sent++;
        return QUEUED;
    }

    private void flushIf(boolean queued) {
        if (queued) {
            out.flush();
        }
    }

    /** A request whose local memory is gone fails LOCAL_PROTECTION once everything before it completed. */
    private void failWhenHead(WorkRequest wr) {
        if (sent == 0 && ep.requests().peekFirst() == wr) {
            ep.fail(wr, DtoStatus.LOCAL_PROTECTION);
        }
    }

    private void completeLeadingBinds() {
        ArrayDeque<WorkRequest> requests = ep.requests();
        while (true) {
            WorkRequest head = requests.peekFirst();
            if (!(head instanceof WorkRequest.Bind bind)) {
                return;
            }
            requests.pollFirst();
            if (sent > 0) {
                sent--;
            }
            ep.completeRequest(bind, DtoStatus.SUCCESS, 0);
        }
    }

    /** A checked header of the established connection: where its payload goes, or what it answers. */
    @Override
    public void header(Frame h) throws Frame.ProtocolException {
        switch (h.type()) {
            case SEND -> {
                checkSeq(h);
                RcRules.SendVerdict v = RcRules.takeReceive(ep, h.length(), h.invalidate(), h.invalidateContext(),
                        verdict);
                if (v.recv() == null) {
                    rnrNaked = true;
                    out.enqueue(out.frame().nak(h.seq(), Frame.Nak.RNR));
                    return;
                }
                expectedSeq++;
                if (!v.accepted()) {
                    responderError(v, h.seq());
                    return;
                }
                WorkRequest.Recv recv = v.recv();
                inbound = recv;
                inboundImmediate = false;
                inboundOp = v.op();
                inboundInvalidated = v.invalidated();
                List<LmrTriplet> iov = recv.iov;
                for (int i = 0; i < iov.size(); i++) {
                    LmrTriplet t = iov.get(i);
                    in.place(t.lmr().segment(), t.offset(), t.length());
                }
            }
            case RDMA_WRITE -> {
                checkSeq(h);
                expectedSeq++;
                if (!RcRules.placeRemoteWrite(ep, h.rmrContext(), h.targetAddress(), h.length(), in)) {
                    remoteAccessViolation(h, "RDMA Write");
                }
            }
            case RDMA_WRITE_IMM -> {
                checkSeq(h);
                WorkRequest.Recv recv = RcRules.nextImmediateReceive(ep);
                if (recv == null) {
                    rnrNaked = true;
                    out.enqueue(out.frame().nak(h.seq(), Frame.Nak.RNR));
                    return;
                }
                expectedSeq++;
                if (!RcRules.placeRemoteWrite(ep, h.rmrContext(), h.targetAddress(), h.length(), in)) {
                    remoteAccessViolation(h, "RDMA Write with immediate data");
                    return;
                }
                RcRules.takeImmediateReceive(ep);
                inbound = recv;
                inboundImmediate = true;
            }
            case FETCH_ADD -> {
                checkSeq(h);
                expectedSeq++;
                atomic(h, 0);
            }
            case CMP_SWAP -> {
                checkSeq(h);
                expectedSeq++;
                in.expectControl();
            }
            case ATOMIC_RESP -> {
                WorkRequest head = inFlightHead(h);
                if (!(head instanceof WorkRequest.Ext x) || !TcpExtensions.isAtomic(x)) {
                    throw new Frame.ProtocolException("an atomic response for request " + h.seq() + ", which is no atomic");
                }
                if (TcpExtensions.land(x, h.originalValue())) {
                    requestDone(head, DtoStatus.SUCCESS);
                } else {
                    sent--;
                    readsInFlight--;
                    ep.fail(head, DtoStatus.LOCAL_PROTECTION);
                }
            }
            case RDMA_READ_REQ -> {
                checkSeq(h);
                expectedSeq++;
                if (out.readResponsesQueued() >= MAX_READS_IN_FLIGHT) {
                    throw new Frame.ProtocolException("more than " + MAX_READS_IN_FLIGHT + " RDMA Reads in flight");
                }
                MemorySegment source = RcRules.remoteMemory(ep, h.rmrContext(), h.targetAddress(), h.readLength(), true);
                if (source == null) {
                    remoteAccessViolation(h, "RDMA Read");
                    return;
                }
                out.enqueue(out.frame().rdmaReadResponse(h.seq(), h.readLength(), source));
            }
            case RDMA_READ_RESP -> {
                WorkRequest head = inFlightHead(h);
                if (!(head instanceof WorkRequest.Rdma rdma) || !rdma.read) {
                    throw new Frame.ProtocolException("a read response for request " + h.seq() + ", which is no RDMA Read");
                }
                if (h.length() != rdma.length) {
                    throw new Frame.ProtocolException("a read response of " + h.length() + " bytes for a read of "
                            + rdma.length);
                }
                if (rdma.iov != null) {
                    if (Segments.usable(rdma.iov)) {
                        for (int i = 0; i < rdma.iov.size(); i++) {
                            LmrTriplet t = rdma.iov.get(i);
                            in.place(t.lmr().segment(), t.offset(), t.length());
                        }
                    }
                } else {
                    MemorySegment sink = contexts.resolve(rdma.localTarget.rmrContext(), ep,
                            rdma.localTarget.targetAddress(), rdma.length, MemPriv.REMOTE_WRITE);
                    if (sink != null) {
                        in.place(sink);
                    }
                }
            }
            case ACK -> {
                WorkRequest head = inFlightHead(h);
                if (head instanceof WorkRequest.Rdma rdma && rdma.read) {
                    throw new Frame.ProtocolException("an ACK for RDMA Read " + h.seq());
                }
                requestDone(head, DtoStatus.SUCCESS);
            }
            case NAK -> nak(h);
            case RECV_POSTED -> {
                WorkRequest head = ep.requests().peekFirst();
                if (head instanceof WorkRequest.Send send && sent == 0 && send.rnrDeadline != 0) {
                    send.rnrRetry = true;
                    ep.pumpRequests();
                } else if (head instanceof WorkRequest.Ext x && sent == 0 && x.rnrDeadline != 0) {
                    x.rnrRetry = true;
                    ep.pumpRequests();
                }
            }
            case DISCONNECT -> ep.connection().peerDisconnectNotification();
            case ABORT -> in.expectControl();
            default -> throw new Frame.ProtocolException(h.type() + " on an established connection");
        }
    }

    private void checkSeq(Frame h) throws Frame.ProtocolException {
        if (h.seq() != expectedSeq) {
            throw new Frame.ProtocolException(h.type() + " with sequence number " + h.seq() + ", expected "
                    + expectedSeq);
        }
    }

    /** The head of the EP's transmitted requests, which the answer {@code h} must name. */
    private WorkRequest inFlightHead(Frame h) throws Frame.ProtocolException {
        WorkRequest head = ep.requests().peekFirst();
        if (sent == 0 || head == null || head instanceof WorkRequest.Bind || head.seq != h.seq()) {
            throw new Frame.ProtocolException(h.type() + " for request " + h.seq()
                    + ", which is not the oldest in flight");
        }
        return head;
    }

    private void requestDone(WorkRequest head, DtoStatus status) {
        long length = switch (head) {
            case WorkRequest.Send s -> s.length;
            case WorkRequest.Rdma r -> r.length;
            case WorkRequest.Ext x -> x.length;
            default -> 0;
        };
        ep.requests().pollFirst();
        sent--;
        if (head instanceof WorkRequest.Send) {
            sendOutstanding = false;
        }
        if (readLike(head)) {
            readsInFlight--;
        } else if (head instanceof WorkRequest.Ext) {
            sendOutstanding = false;
        }
        ep.completeRequest(head, status, status == DtoStatus.SUCCESS ? length : 0);
        ep.recycle(head);
        ep.pumpRequests();
    }

    private void nak(Frame h) throws Frame.ProtocolException {
        WorkRequest head = inFlightHead(h);
        if (h.nak() == Frame.Nak.RNR && head instanceof WorkRequest.Ext x && !TcpExtensions.isAtomic(x)) {
            rnrExtended(x);
            return;
        }
        if (h.nak() == Frame.Nak.RNR) {
            if (!(head instanceof WorkRequest.Send send)) {
                throw new Frame.ProtocolException("an RNR NAK for request " + h.seq() + ", which is no send");
            }
            long now = System.nanoTime();
            sent--;
            sendOutstanding = false;
            if (RcRules.rnrExhausted(send, now)) {
                ep.fail(send, DtoStatus.RECEIVER_NOT_READY);
                return;
            }
            send.rnrRetry = false;
            EmuEp owner = ep;
            RcRules.retryAtDeadline(owner, send, now, 0, () -> {
                send.rnrRetry = true;
                owner.pumpRequests();
            });
            return;
        }
        DtoStatus status = h.nak() == Frame.Nak.REMOTE_ACCESS ? DtoStatus.REMOTE_ACCESS : DtoStatus.REMOTE_RESPONDER;
        sent--;
        sendOutstanding = false;
        if (readLike(head)) {
            readsInFlight--;
        }
        ep.fail(head, status);
    }

    /** Whether {@code wr} counts among the reads in flight: an RDMA Read or an atomic. */
    private static boolean readLike(WorkRequest wr) {
        return (wr instanceof WorkRequest.Rdma r && r.read)
                || (wr instanceof WorkRequest.Ext x && TcpExtensions.isAtomic(x));
    }

    /** An RDMA Write with immediate data found no receive: sent again as a send is, until its window ends. */
    private void rnrExtended(WorkRequest.Ext x) {
        long now = System.nanoTime();
        sent--;
        sendOutstanding = false;
        if (RcRules.rnrExhausted(x, now)) {
            ep.fail(x, DtoStatus.RECEIVER_NOT_READY);
            return;
        }
        x.rnrRetry = false;
        EmuEp owner = ep;
        RcRules.retryAtDeadline(owner, x, now, 0, () -> {
            x.rnrRetry = true;
            owner.pumpRequests();
        });
    }

    /** Executes the peer's atomic {@code h} and answers it, or refuses it (REMOTE_ACCESS, the link breaks). */
    private void atomic(Frame h, long swap) {
        if (TcpExtensions.execute(contexts, ep, h, swap, fetched)) {
            out.enqueue(out.frame().atomicResponse(h.seq(), fetched[0]));
            answerLater.run();
        } else {
            remoteAccessViolation(h, h.type() == FrameType.FETCH_ADD ? "fetch-and-add" : "compare-and-swap");
        }
    }

    /** A receive could not take the message: it completes with an error, the sender is NAKed, the link breaks. */
    private void responderError(RcRules.SendVerdict v, long seq) {
        ep.completeRecv(v.recv(), v.recvStatus(), 0, v.op(), 0);
        Frame.Nak nak = v.senderStatus() == DtoStatus.REMOTE_ACCESS ? Frame.Nak.REMOTE_ACCESS
                : Frame.Nak.REMOTE_RESPONDER;
        out.enqueue(out.frame().nak(seq, nak));
        in.dropFrame();
        ep.connection().breakLink();
    }

    private void remoteAccessViolation(Frame h, String what) {
        LOG.warn("IA {}: {} from {} refused (rmr_context 0x{}, address 0x{}, {} bytes): the connection breaks",
                ia.name(), what, remoteLabel, Long.toHexString(h.rmrContext()), Long.toHexString(h.targetAddress()),
                h.type() == FrameType.RDMA_READ_REQ ? h.readLength() : h.length());
        out.enqueue(out.frame().nak(h.seq(), Frame.Nak.REMOTE_ACCESS));
        in.dropFrame();
        ep.connection().breakLink();
    }

    /** Completes a receive that was filling when the connection ended (FLUSHED, before any later receive). */
    void completeInbound() {
        WorkRequest.Recv r = inbound;
        if (r != null) {
            inbound = null;
            if (inboundImmediate) {
                ep.completeRecvImmediate(r, DtoStatus.FLUSHED, 0, 0);
            } else {
                ep.completeRecv(r, DtoStatus.FLUSHED, 0, DtoOperation.RECEIVE, 0);
            }
        }
    }
}
