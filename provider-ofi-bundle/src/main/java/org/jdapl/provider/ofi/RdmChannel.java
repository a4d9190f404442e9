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
    /**
     * How long a message waits on a socket-address provider (rxm) for the provider to take it: rxm
     * answers {@code -FI_EAGAIN} while it connects to the peer, which over verbs is an RDMA CM
     * connection (address and route resolution, a queue pair, the CM's REQ, REP and RTU) for the first
     * message between two endpoints: 0.3 to 1.6 s on Soft-RoCE under an emulated CPU. Such a message
     * waits in the channel ({@link #retryWaiting}, from {@link #poll}), not in the sender's thread.
     */
    static final long RXM_TAKE_NANOS = 3_000_000_000L;
    /**
     * As {@link #RXM_TAKE_NANOS} where rxm's core is verbs: an RDMA CM connection between two hubs that
     * had not met took more than 3 s on Soft-RoCE under an emulated CPU (LMR_04's REQ).
     */
    static final long RXM_VERBS_TAKE_NANOS = 10_000_000_000L;
    /** The least time between two tries of a waiting message (rxm connects anew after a refusal). */
    private static final long RETRY_NANOS = 5_000_000L;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(RdmChannel.class);


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
    /** rxm: messages the provider did not take yet, oldest first; each holds its send buffer. */
    private final java.util.ArrayDeque<Waiting> waiting = new java.util.ArrayDeque<>();
    private long nextRetry;
    /** How long a message waits for rxm to take it ({@link #RXM_TAKE_NANOS}, {@link #RXM_VERBS_TAKE_NANOS}). */
    private final long takeNanos;

    /** A message in send buffer {@code slot} of {@code len} bytes to {@code dest}, given up at {@code deadline}. */
    private record Waiting(long dest, int slot, int len, long src, long deadline) {
    }
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
        String provider = org.jdapl.provider.ofi.fabric.FiInfo.providerName(ia.info);
        this.takeNanos = provider != null && provider.startsWith("verbs") ? RXM_VERBS_TAKE_NANOS : RXM_TAKE_NANOS;
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
                retryWaiting(true);
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
            if (!ia.rdm.named) {
                sendOrWait(dest, s, len, m.src());
                return;
            }
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

    /**
     * rxm: sends the message in buffer {@code s}, or, if the provider does not take it yet
     * ({@code -FI_EAGAIN}: it connects to the peer) or an earlier message to the same peer waits, lets
     * it wait in order for {@link #RXM_TAKE_NANOS}. The lock is held.
     */
    private void sendOrWait(long dest, int s, int len, long src) {
        sendBusy[s] = true;
        sendSrc[s] = src;
        boolean behind = false;
        for (Waiting w : waiting) {
            behind |= w.dest() == dest;
        }
        long rc = behind ? -Fi.FI_EAGAIN : FiRdm.send(ep, buffer(RECVS + s).address(), len, desc, dest, SEND_CONTEXT + s);
        if (rc == -Fi.FI_EAGAIN) {
            waiting.add(new Waiting(dest, s, len, src, System.nanoTime() + takeNanos));
        } else if (rc != 0) {
            sendBusy[s] = false;
            throw FiErrors.toDat(rc, "fi_send");
        }
    }

    /**
     * rxm: tries the waiting messages again, the oldest to each peer first (at most every
     * {@link #RETRY_NANOS} unless {@code now}); a message the provider did not take within
     * {@link #RXM_TAKE_NANOS}, or refused, fails with every later one to that peer (reported to the
     * owner by {@link #poll}), and the peer counts as stuck. The lock is held.
     */
    private void retryWaiting(boolean now) {
        if (waiting.isEmpty()) {
            return;
        }
        long t = System.nanoTime();
        if (!now && t - nextRetry < 0) {
            return;
        }
        nextRetry = t + RETRY_NANOS;
        java.util.Set<Long> blocked = new java.util.HashSet<>();
        java.util.Set<Long> gone = new java.util.HashSet<>();
        for (java.util.Iterator<Waiting> i = waiting.iterator(); i.hasNext(); ) {
            Waiting w = i.next();
            long rc;
            if (gone.contains(w.dest())) {
                rc = -Fi.FI_EAGAIN;
            } else if (blocked.contains(w.dest())) {
                continue;
            } else {
                rc = FiRdm.send(ep, buffer(RECVS + w.slot()).address(), w.len(), desc, w.dest(), SEND_CONTEXT + w.slot());
            }
            if (rc == 0) {
                i.remove();
            } else if (rc == -Fi.FI_EAGAIN && t - w.deadline() < 0 && !gone.contains(w.dest())) {
                blocked.add(w.dest());
            } else {
                i.remove();
                gone.add(w.dest());
                if (rc == -Fi.FI_EAGAIN) {
                    stuck.add(w.dest());
                }
                sendBusy[w.slot()] = false;
                LOG.debug("a message to {} not taken within {} ms: {}", FiRdm.toString(peers.get(w.dest())),
                        (t - w.deadline() + takeNanos) / 1_000_000, rc);
                failed.add(new long[] {w.src(), rc == -Fi.FI_EAGAIN ? Fi.FI_EAGAIN : -rc});
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
            retryWaiting(false);
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
            if (!ia.rdm.named) {
                // rxm 1.17 closes each connection's core endpoint and then reads the core CQ, and a
                // message received before the close is handled there and its buffer posted again to
                // the closed endpoint (a SIGSEGV in libfabric.so.1 at an IA's close in the rxm kit on
                // verbs): what has arrived is read first.
                for (int guard = 0; guard < 64 && readCq() > 0; guard++) {
                    // more
                }
            }
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
