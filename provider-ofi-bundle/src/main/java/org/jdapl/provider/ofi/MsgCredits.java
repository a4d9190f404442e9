package org.jdapl.provider.ofi;

import static org.jdapl.provider.ofi.fabric.FiLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.jdapl.provider.ofi.fabric.FiException;

/**
 * Receive credits of one connection on MSG endpoints: a send leaves only once the peer has posted a
 * receive for it. libfabric's tcp provider puts a send into the socket whether or not the peer has a
 * receive posted; the peer's provider then keeps the message at the head of its stream until a
 * receive comes (nothing behind it, not even the FIN, is read meanwhile). DAT wants such a send to
 * stay outstanding at the sender: an abrupt disconnect flushes it and nothing of it reaches the
 * peer (DISC_02, DISC_05), and the peer sees the disconnect at once (DISC_03). So a send waits at
 * the sender, as DAT's "outstanding" means, until a receive is posted for it:
 *
 * <ul>
 * <li>each side registers a few words for remote writes and names them (address, key) in a header
 * before the consumer's private data of the connect and of the accept, with flags that say whether
 * its receives are counted (not on an SRQ: then the EP cannot tell which receive is its own, and the
 * peer sends freely) and whether it announces them lazily (below);</li>
 * <li>the receiver counts the receives it posts and gives the count (cumulative) to the sender: as
 * the remote CQ data of each of its own sends where the provider carries 8 bytes of it (tcp:
 * {@code fi_sendmsg} with FI_REMOTE_CQ_DATA, bit 63 set, {@link #CREDIT}; an RDMA Write with
 * immediate data's message has bit 63 clear, its length being below 2^31, {@link OfiExtensions}), and
 * in a write into the sender's <em>credit word</em> ({@code fi_writemsg} with {@code FI_INJECT}, no
 * completion is asked; context 0, which names no DTO, so a provider that reports it anyway is
 * ignored) once when the connection is established and then only when it is needed;</li>
 * <li>where sends carry the count (lazy announcing), the write is needed when the sender may be
 * waiting: the sender that holds a send for lack of a credit writes, once per stall, the count it
 * needs into the receiver's <em>hungry word</em>; the receiver writes its count when it posts a receive
 * or reads its CQs (the IA's progress, a consumer's EVD poll: {@link HeldRequests#pump}) and finds the
 * peer hungry for a count it has not announced while it has more posted, and whenever half of its
 * receive queue's depth is posted unannounced. No wake-up is lost: the hungry write lands during a
 * read of the receiver's CQs (its progress thread waits on their descriptors, or a consumer polls
 * them), and the receiver checks the word after each read while it owes a count
 * ({@link HeldRequests#owing}); a receive posted later checks it too;</li>
 * <li>the sender counts the sends it has handed to libfabric (an RDMA Write with immediate data is
 * one: its message consumes a receive, {@link OfiExtensions}); a send with no credit (the peer's
 * largest count, written or carried, not above that) and every request after it wait in their ring
 * slots, in order; they leave when a count grows, which the IA's progress (and a consumer's EVD poll)
 * checks after reading the CQs that carried the peer's write or send. An abrupt disconnect flushes
 * what waits.</li>
 * </ul>
 *
 * <p>Not on libfabric's verbs provider: an RC queue pair holds a send for which the responder has no
 * receive posted by itself (the responder answers receiver-not-ready and the requester retries
 * without end: libfabric's verbs connects with {@code rnr_retry_count = 7}, {@code verbs_cm.c}), which is
 * DAT's outstanding send, and an abrupt disconnect flushes it; so a verbs EP's receives are not
 * counted (the header says so) and its peer sends freely. The closing flag below serves verbs too.
 *
 * <p>The words are written only by the peer's provider and read here; counts are cumulative, so a
 * late or repeated write is harmless. The header is {@link #HEADER} bytes: magic, version (2), flags
 * (1: counted, 2: lazy), a reserved byte, the words' address (0 where the provider addresses regions
 * by offset) and key. The words: [0] the credit word, [16] the closing flag, [32] the hungry word.
 *
 * <p>The same registration carries the peer's <em>closing flag</em>: a side that
 * disconnects (gracefully or abruptly) writes 1 into the peer's flag just before {@code fi_shutdown},
 * in the same stream, so the peer's provider places it before it reads the end of the stream. The tcp
 * provider reports every end of a connection as a plain {@code FI_SHUTDOWN} (the peer's close, a
 * reset, a refused RMA, the peer's death: {@code tcpx_ep_disable(ep, 0, ...)}); with the flag the
 * peer tells a disconnect (DISCONNECTED) from a broken transport (BROKEN).
 *
 * <p>Behaviours: DISC_02, DISC_03, DISC_05, DISC_17.
 */
final class MsgCredits {
    /** The header before the consumer's private data of a connect or accept. */
    static final int HEADER = 20;
    private static final byte MAGIC = 0x4a;
    private static final byte VERSION = 2;
    private static final byte COUNTS = 1;
    private static final byte LAZY = 2;
    /** The bit of a send's remote CQ data that marks it as a count of receives (the rest of it). */
    static final long CREDIT = 1L << 63;
    private static final long INJECT = 1L << 25; // FI_INJECT

    /** The peer's part of a header; {@code counts} whether its receives are counted. */
    record Peer(boolean valid, boolean counts, boolean lazy, long address, long key) {
        static final Peer NONE = new Peer(false, false, false, 0, 0);
    }

    private final OfiIa ia;
    private final OfiEp ep;
    private final Arena arena = Arena.ofShared();
    /**
     * [0] the credit word (the peer's count); [8] the count to write; [16] the closing flag (the
     * peer's); [24] 1, to write; [32] the hungry word (the count the peer waits for); [40] the count
     * this side waits for, to write.
     */
    private final MemorySegment mem;
    private final MemorySegment iov;
    private final MemorySegment desc;
    private final MemorySegment rmaIov;
    private final MemorySegment msg;
    private final long mr;
    private final long key;
    private final boolean counts;
    /** Sends carry the count of posted receives (8 bytes of CQ data), so the count is written lazily. */
    private final boolean lazy;
    /** Unannounced receives that make the count due without a hungry peer: half the receive queue's depth. */
    private final int batch;
    private Peer peer = Peer.NONE;
    private boolean connected;
    private long posted;
    private long sent;
    private boolean announceDue;
    /** The count the peer has been given (written or carried). */
    private long announced;
    /** The largest count the peer's sends carried. */
    private long carriedIn;
    /** The count last written into the peer's hungry word. */
    private long hungryWritten;

    /**
     * Registers the words; {@code counts} whether this EP's receives are its own (no SRQ), {@code lazy}
     * whether its sends carry the count ({@link #CREDIT}), {@code recvDepth} its receive queue's depth.
     */
    MsgCredits(OfiEp ep, boolean counts, boolean lazy, int recvDepth) {
        this.ia = ep.ia;
        this.ep = ep;
        this.counts = counts;
        this.lazy = lazy && counts;
        this.batch = Math.max(1, recvDepth / 2);
        mem = arena.allocate(64, 64);
        iov = arena.allocate(16, 8);
        desc = arena.allocate(8, 8);
        rmaIov = arena.allocate(FI_RMA_IOV.size(), 8);
        msg = arena.allocate(FI_MSG_RMA.size(), 8);
        try {
            mr = FiCalls.mrReg(ia.domain, mem.address(), 48, Fi.FI_READ | Fi.FI_WRITE | Fi.FI_REMOTE_WRITE, 0,
                    OfiLmr.nextKey(), 0);
        } catch (FiException e) {
            arena.close();
            throw FiErrors.toDat(e);
        }
        key = FiCalls.word(mr + MR_KEY);
        iov.set(ValueLayout.JAVA_LONG, IOV_BASE, mem.address() + 8);
        iov.set(ValueLayout.JAVA_LONG, IOV_LEN, 8);
        desc.set(ValueLayout.JAVA_LONG, 0, FiCalls.word(mr + MR_MEM_DESC));
        msg.set(ValueLayout.JAVA_LONG, MSG_RMA_MSG_IOV, iov.address());
        msg.set(ValueLayout.JAVA_LONG, MSG_RMA_DESC, desc.address());
        msg.set(ValueLayout.JAVA_LONG, MSG_RMA_IOV_COUNT, 1);
        msg.set(ValueLayout.JAVA_LONG, MSG_RMA_RMA_IOV, rmaIov.address());
        msg.set(ValueLayout.JAVA_LONG, MSG_RMA_RMA_IOV_COUNT, 1);
        msg.set(ValueLayout.JAVA_LONG, MSG_RMA_CONTEXT, 0);
    }

    /** The header, then the consumer's private data {@code pd}. */
    byte[] wire(byte[] pd) {
        byte[] b = new byte[HEADER + (pd == null ? 0 : pd.length)];
        b[0] = MAGIC;
        b[1] = VERSION;
        b[2] = (byte) ((counts ? COUNTS : 0) | (lazy ? LAZY : 0));
        long address = (ia.mrMode & Fi.FI_MR_VIRT_ADDR) != 0 ? mem.address() : 0;
        for (int i = 0; i < 8; i++) {
            b[4 + i] = (byte) (address >>> (8 * i));
            b[12 + i] = (byte) (key >>> (8 * i));
        }
        if (pd != null) {
            System.arraycopy(pd, 0, b, HEADER, pd.length);
        }
        return b;
    }

    /** The peer's header in {@code data} ({@link Peer#NONE} without one). */
    static Peer peerOf(byte[] data) {
        if (data == null || data.length < HEADER || data[0] != MAGIC || data[1] != VERSION) {
            return Peer.NONE;
        }
        long address = 0;
        long k = 0;
        for (int i = 7; i >= 0; i--) {
            address = (address << 8) | (data[4 + i] & 0xff);
            k = (k << 8) | (data[12 + i] & 0xff);
        }
        return new Peer(true, (data[2] & COUNTS) != 0, (data[2] & LAZY) != 0, address, k);
    }

    /** The consumer's private data in {@code data}: what follows a header, or all of it without one. */
    static byte[] consumerData(byte[] data) {
        return peerOf(data).valid() ? Arrays.copyOfRange(data, HEADER, data.length) : data;
    }

    /**
     * The connection is established with {@code peer} (the EP's lock is held): the count of the
     * receives posted so far goes to it; false if that must be tried again.
     */
    boolean established(long fid, Peer p) {
        peer = p;
        connected = true;
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_LEN, 8);
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_KEY, p.key());
        announceDue = true;
        return announce(fid);
    }

    /** A receive was posted on the endpoint {@code fid} (the EP's lock is held); false if the announce must be retried. */
    boolean received(long fid) {
        posted++;
        if (!connected) {
            return true;
        }
        if (lazy && posted - announced < batch && !peerHungry()) {
            ia.held.owing(ep, true); // the count goes with the next send, or when the peer is hungry
            return true;
        }
        announceDue = true;
        return announce(fid);
    }

    /** Writes the count of posted receives into the peer's word if it is due; false if it must be tried again. */
    boolean announce(long fid) {
        if (!announceDue || !connected || !counts || !peer.valid() || fid == 0) {
            return true;
        }
        long count = posted;
        mem.set(ValueLayout.JAVA_LONG, 8, count);
        iov.set(ValueLayout.JAVA_LONG, IOV_BASE, mem.address() + 8);
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_ADDR, peer.address());
        long rc = FiCalls.writemsg(fid, msg.address(), INJECT);
        if (rc == -Fi.FI_EAGAIN) {
            return false;
        }
        announceDue = false;
        given(count);
        return true;
    }

    /** The peer has been given {@code count}: nothing is owed once it is the count posted. */
    private void given(long count) {
        if (count > announced) {
            announced = count;
        }
        if (announced >= posted) {
            ia.held.owing(ep, false);
        }
    }

    /** Whether the peer waits for a count above the one it has been given. */
    private boolean peerHungry() {
        if (!peer.valid()) {
            return false;
        }
        VarHandle.acquireFence();
        return mem.get(ValueLayout.JAVA_LONG, 32) > announced;
    }

    /**
     * The EP owes the peer a count (lazy announcing) and its CQs were read: the count is written if
     * the peer is hungry (the EP's lock is held); false if the write must be tried again.
     */
    boolean answerHungry(long fid) {
        if (!connected || fid == 0 || posted <= announced) {
            ia.held.owing(ep, false);
            return true;
        }
        if (!peerHungry()) {
            return true;
        }
        announceDue = true;
        return announce(fid);
    }

    /**
     * The remote CQ data a send carries: {@link #CREDIT} and the count of posted receives; 0 (a send
     * without CQ data) where sends do not carry it.
     */
    long carried() {
        return lazy && connected && peer.valid() ? CREDIT | posted : 0;
    }

    /** A send that carried {@code data} ({@link #carried}, not 0) was handed to libfabric. */
    void carriedOut(long data) {
        given(data & ~CREDIT);
    }

    /** A send of the peer carried {@code data} ({@link #CREDIT} and its count of posted receives). */
    void carriedIn(long data) {
        long count = data & ~CREDIT;
        if (count > carriedIn) {
            carriedIn = count;
        }
    }

    /**
     * This side holds a send for lack of a credit: the count it needs goes into the peer's hungry
     * word, once per stall, where the peer announces lazily (the EP's lock is held); false if the
     * write must be tried again.
     */
    boolean hungry(long fid) {
        long need = sent + 1;
        if (!peer.valid() || !peer.lazy() || !connected || fid == 0 || need <= hungryWritten) {
            return true;
        }
        mem.set(ValueLayout.JAVA_LONG, 40, need);
        iov.set(ValueLayout.JAVA_LONG, IOV_BASE, mem.address() + 40);
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_ADDR, peer.address() + 32);
        long rc = FiCalls.writemsg(fid, msg.address(), INJECT);
        if (rc == -Fi.FI_EAGAIN) {
            return false;
        }
        hungryWritten = need;
        return true;
    }

    /**
     * This side ends the connection (the EP's lock is held): the peer's closing flag is written, ahead
     * of the {@code fi_shutdown} that follows. Nothing more is written after it.
     */
    void closing(long fid) {
        if (connected && peer.valid() && fid != 0) {
            mem.set(ValueLayout.JAVA_LONG, 24, 1);
            iov.set(ValueLayout.JAVA_LONG, IOV_BASE, mem.address() + 24);
            rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_ADDR, peer.address() + 16);
            FiCalls.writemsg(fid, msg.address(), INJECT);
        }
        connected = false;
    }

    /**
     * Whether the peer's end of the connection was a disconnect of its consumer (its closing flag is
     * set) rather than a broken transport; true for a peer without the header.
     */
    boolean peerDisconnected() {
        if (!peer.valid()) {
            return true;
        }
        VarHandle.acquireFence();
        return mem.get(ValueLayout.JAVA_LONG, 16) != 0;
    }

    /** Whether a send may leave now (a credit is there, or the peer's receives are not counted). */
    boolean maySend() {
        if (!peer.valid() || !peer.counts()) {
            return true;
        }
        VarHandle.acquireFence();
        return Math.max(mem.get(ValueLayout.JAVA_LONG, 0), carriedIn) - sent > 0;
    }

    /**
     * The completion flags of a send that carries a count ({@code fi_sendmsg} replaces the endpoint's
     * default flags): FI_DELIVERY_COMPLETE, as the endpoint's default ({@link org.jdapl.provider.ofi.fabric.FiInfo#deliveryComplete}).
     */
    long sendFlags() {
        return Fi.FI_DELIVERY_COMPLETE;
    }

    /** A send was handed to libfabric. */
    void sent() {
        sent++;
    }

    /** Closes the credit word's registration (after the endpoint is closed). */
    void close() {
        ia.held.owing(ep, false);
        OfiIa.closeQuietly(mr);
        arena.close();
    }
}
