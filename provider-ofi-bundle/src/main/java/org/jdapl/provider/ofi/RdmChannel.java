package org.jdapl.provider.ofi;

import static org.jdapl.provider.ofi.fabric.FiLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.jdapl.provider.ofi.fabric.FiException;
import org.jdapl.provider.ofi.fabric.FiRdm;

/**
 * A control endpoint of the RDM connection protocol: an RDM endpoint with its own address vector and
 * CQ, a few receive buffers always posted and a ring of send buffers (registered when the domain asks
 * for {@code FI_MR_LOCAL}). A PSP listens on one, each connecting or connected EP talks to its peer
 * through one; consumer DTOs never meet these messages, which go through the EP's data endpoint.
 * Messages read by {@link #poll} (or while a send waits for room) are handed to the owner by
 * {@link #poll}, outside the channel's lock.
 */
final class RdmChannel {
    private static final int RECVS = 8;
    private static final int SENDS = 16;
    private static final long SEND_CONTEXT = 1000;
    /**
     * How long a send waits for a free buffer or for the provider to take it ({@code -FI_EAGAIN}: shm
     * until the peer's progress has read this endpoint's name, its first message to a new peer).
     */
    static final long SEND_NANOS = 1_000_000_000L;

    /** The channel's owner: a listener or a connection. */
    interface Owner {
        void received(RdmChannel channel, RdmMessage m);

        /** A send of the message {@code src} sent failed ({@code err} is the completion's errno). */
        void sendFailed(RdmChannel channel, int err, long src);
    }

    private final OfiIa ia;
    private final Owner owner;
    final long ep;
    private final long av;
    private final long cq;
    private final long mr;
    private final long desc;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment bufs;
    private final MemorySegment cqBuf;
    private final MemorySegment errBuf;
    private final boolean[] sendBusy = new boolean[SENDS];
    /** The connection id ({@link RdmMessage#src}) of the message in each send buffer. */
    private final long[] sendSrc = new long[SENDS];
    private int nextSend;
    private final List<RdmMessage> pending = new ArrayList<>();
    private final java.util.Map<Long, byte[]> peers = new java.util.HashMap<>();
    private final java.util.Map<String, Long> inserted = new java.util.HashMap<>();
    /** Peers that took no message for {@link #SEND_NANOS}. */
    private final java.util.Set<Long> stuck = new java.util.HashSet<>();
    /** Every send buffer stayed busy for {@link #SEND_NANOS}; cleared by the next send completion. */
    private boolean congested;
    /** Failed sends since the last poll: pairs of the message's src and the errno. */
    private final List<long[]> failed = new ArrayList<>();
    final byte[] name;
    private volatile boolean closed;

    /** Opens the endpoint named {@code src} (null: the provider's choice) and posts its receives. */
    RdmChannel(OfiIa ia, byte[] src, Owner owner) {
        this.ia = ia;
        this.owner = owner;
        long info = ia.rdm.endpointInfo(src);
        long e = 0;
        long a = 0;
        long q = 0;
        long m = 0;
        try {
            MemorySegment attr = arena.allocate(FI_CQ_ATTR.size(), 8);
            attr.set(ValueLayout.JAVA_LONG, CQ_ATTR_SIZE, 64);
            attr.set(ValueLayout.JAVA_INT, CQ_ATTR_FORMAT, Fi.FI_CQ_FORMAT_DATA);
            attr.set(ValueLayout.JAVA_INT, CQ_ATTR_WAIT_OBJ, Fi.FI_WAIT_NONE);
            q = FiCalls.cqOpen(ia.domain, attr.address(), 0);
            long[] opened = FiRdm.openEndpoint(ia.domain, info, 16, q, q);
            e = opened[0];
            a = opened[1];
            bufs = arena.allocate((long) RdmMessage.BUFFER * (RECVS + SENDS), 64);
            if ((ia.mrMode & Fi.FI_MR_LOCAL) != 0) {
                m = FiCalls.mrReg(ia.domain, bufs.address(), bufs.byteSize(), Fi.FI_SEND | Fi.FI_RECV, 0,
                        ia.nextId(), 0);
            }
            desc = m == 0 ? 0 : FiCalls.word(m + MR_MEM_DESC);
            cqBuf = arena.allocate(FI_CQ_DATA_ENTRY.size() * 8, 8);
            errBuf = arena.allocate(FI_CQ_ERR_ENTRY.size(), 8);
            this.ep = e;
            this.av = a;
            this.cq = q;
            this.mr = m;
            for (int i = 0; i < RECVS; i++) {
                repost(i);
            }
            name = FiRdm.name(e);
            if (ia.rdm.named) {
                RdmLocal.opened(name);
            }
        } catch (FiException | DatException x) {
            OfiIa.closeQuietly(e);
            OfiIa.closeQuietly(m);
            OfiIa.closeQuietly(a);
            OfiIa.closeQuietly(q);
            arena.close();
            throw x instanceof FiException fe ? FiErrors.toDat(fe) : (DatException) x;
        } finally {
            Fi.get().freeinfo(info);
        }
        ia.rdm.channels.add(this);
    }

    private MemorySegment buffer(int i) {
        return bufs.asSlice((long) i * RdmMessage.BUFFER, RdmMessage.BUFFER);
    }

    private void repost(int i) {
        long rc = FiRdm.recv(ep, buffer(i).address(), RdmMessage.BUFFER, desc, i + 1);
        if (rc < 0) {
            throw FiErrors.toDat(rc, "fi_recv");
        }
    }

    /**
     * Inserts a peer's address into the channel's address vector (once): its {@code fi_addr_t}. A
     * peer of this process whose endpoint is closed is not inserted ({@link RdmLocal}: shm's
     * {@code fi_av_insert} of it touches its unmapped region).
     */
    synchronized long insert(byte[] addr) {
        if (closed) {
            throw new DatException(DatReturnType.INVALID_STATE, "the control endpoint is closed");
        }
        if (RdmLocal.gone(addr)) {
            throw new DatException(DatReturnType.INVALID_STATE, "the peer endpoint " + FiRdm.toString(addr)
                    + " of this process is closed");
        }
        Long known = inserted.get(RdmLocal.key(addr) + "/" + addr.length + "/" + java.util.Arrays.hashCode(addr));
        if (known != null) {
            return known;
        }
        try {
            long a = FiRdm.avInsert(av, addr);
            peers.put(a, addr);
            inserted.put(RdmLocal.key(addr) + "/" + addr.length + "/" + java.util.Arrays.hashCode(addr), a);
            return a;
        } catch (FiException e) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.INVALID_ADDRESS_UNREACHABLE,
                    "fi_av_insert of " + FiRdm.toString(addr) + ": " + e.getMessage());
        }
    }

    /**
     * Sends {@code m} to {@code dest}; a failure that shows later is reported to the owner. A peer of
     * this process whose endpoint is closed is not sent to ({@link RdmLocal}): that fails at once.
     */
    void send(long dest, RdmMessage m) {
        synchronized (this) {
            if (closed) {
                return;
            }
            if (!ia.rdm.named && m.type() == RdmMessage.REQ) {
                // rxm answers -FI_EAGAIN also after a refused connect (nobody listened there then):
                // a new connection request tries again (a PSP created again on the qualifier, OBJ_06).
                stuck.remove(dest);
            }
            if (stuck.contains(dest)) {
                throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                        "the peer " + FiRdm.toString(peers.get(dest)) + " took no message for " + SEND_NANOS / 1_000_000 + " ms");
            }
            if (RdmLocal.gone(peers.get(dest))) {
                throw new DatException(DatReturnType.INVALID_STATE, "the peer endpoint "
                        + FiRdm.toString(peers.get(dest)) + " of this process is closed");
            }
            long end = System.nanoTime() + (congested ? 0 : SEND_NANOS);
            while (sendBusy[nextSend]) {
                readCq();
                if (sendBusy[nextSend] && System.nanoTime() - end > 0) {
                    // No send completed for that long: later sends fail at once until one completes.
                    congested = true;
                    throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_TEP,
                            "the control endpoint's sends do not complete");
                }
            }
            int s = nextSend;
            nextSend = (nextSend + 1) % SENDS;
            MemorySegment b = buffer(RECVS + s);
            int len = m.encode(b.asByteBuffer());
            end = System.nanoTime() + SEND_NANOS;
            while (true) {
                long rc = FiRdm.send(ep, b.address(), len, desc, dest, SEND_CONTEXT + s);
                if (rc == 0) {
                    sendBusy[s] = true;
                    sendSrc[s] = m.src();
                    return;
                }
                if (rc == -Fi.FI_EAGAIN && System.nanoTime() - end > 0) {
                    // Its process is gone or does not progress: later messages to it fail at once.
                    stuck.add(dest);
                }
                if (rc != -Fi.FI_EAGAIN || System.nanoTime() - end > 0) {
                    throw FiErrors.toDat(rc, "fi_send");
                }
                readCq();
                Thread.onSpinWait();
            }
        }
    }

    /** Reads the CQ, reposts the receive buffers and hands the messages to the owner; the number read. */
    int poll() {
        List<RdmMessage> got;
        List<long[]> errs;
        int n = 0;
        synchronized (this) {
            if (closed) {
                return 0;
            }
            int r;
            while ((r = readCq()) > 0) {
                n += r;
            }
            got = pending.isEmpty() ? List.of() : new ArrayList<>(pending);
            pending.clear();
            errs = failed.isEmpty() ? List.of() : new ArrayList<>(failed);
            failed.clear();
        }
        for (long[] e : errs) {
            owner.sendFailed(this, (int) e[1], e[0]);
        }
        for (RdmMessage m : got) {
            owner.received(this, m);
        }
        return n + got.size() + errs.size();
    }

    /** One read of the CQ: the entries read. The lock is held. */
    private int readCq() {
        long n = FiCalls.cqRead(cq, cqBuf.address(), 8);
        if (n > 0) {
            for (int i = 0; i < n; i++) {
                long e = cqBuf.address() + i * FI_CQ_DATA_ENTRY.size();
                done(FiCalls.word(e + CQE_OP_CONTEXT), FiCalls.word(e + CQE_LEN));
            }
            return (int) n;
        }
        if (n == -Fi.FI_EAVAIL) {
            errBuf.fill((byte) 0);
            if (FiCalls.cqReaderr(cq, errBuf.address(), 0) > 0) {
                long ctx = errBuf.get(ValueLayout.JAVA_LONG, CQ_ERR_OP_CONTEXT);
                int err = errBuf.get(ValueLayout.JAVA_INT, CQ_ERR_ERR);
                if (ctx >= SEND_CONTEXT && ctx < SEND_CONTEXT + SENDS) {
                    sendBusy[(int) (ctx - SEND_CONTEXT)] = false;
                    congested = false;
                    failed.add(new long[] {sendSrc[(int) (ctx - SEND_CONTEXT)], err == 0 ? 5 : err});
                } else if (ctx >= 1 && ctx <= RECVS && !closed) {
                    repost((int) ctx - 1);
                }
                return 1;
            }
        }
        return 0;
    }

    private void done(long ctx, long len) {
        if (ctx >= SEND_CONTEXT && ctx < SEND_CONTEXT + SENDS) {
            sendBusy[(int) (ctx - SEND_CONTEXT)] = false;
            congested = false;
        } else if (ctx >= 1 && ctx <= RECVS) {
            int i = (int) ctx - 1;
            RdmMessage m = RdmMessage.decode(buffer(i).asByteBuffer(), (int) len);
            repost(i);
            if (m != null) {
                pending.add(m);
            }
        }
    }

    void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        ia.rdm.channels.remove(this);
        if (ia.rdm.named) {
            RdmLocal.closing(name);
        }
        synchronized (this) {
            OfiIa.closeQuietly(ep);
            OfiIa.closeQuietly(mr);
            OfiIa.closeQuietly(av);
            OfiIa.closeQuietly(cq);
            arena.close();
        }
        if (ia.rdm.named) {
            RdmLocal.closed(name);
        }
    }
}
