package org.jdapl.provider.ofi;

import static org.jdapl.provider.ofi.fabric.FiLayouts.*;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import org.jdapl.provider.ofi.fabric.Fi;
import org.jdapl.provider.ofi.fabric.FiCalls;
import org.jdapl.provider.ofi.fabric.FiException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * before the consumer's private data of the connect and of the accept, with a flag that says whether
 * its receives are counted (not on an SRQ: then the EP cannot tell which receive is its own, and the
 * peer sends freely);</li>
 * <li>the receiver counts the receives it posts and writes the count (cumulative) into the sender's
 * <em>credit word</em> ({@code fi_writemsg} with {@code FI_INJECT}, no completion is asked; context 0,
 * which names no DTO, so a provider that reports it anyway is ignored) once when the connection is
 * established and after every posted receive; a write the provider refuses for the moment
 * ({@code -FI_EAGAIN}) is tried again by the IA's progress ({@link HeldRequests#pump});</li>
 * <li>the sender counts the sends it has handed to libfabric (an RDMA Write with immediate data is
 * one: its message consumes a receive, {@link OfiExtensions}); a send with no credit (the peer's
 * count not above that) and every request after it wait in their ring slots, in order; they leave
 * when the count grows, which the IA's progress (and a consumer's EVD poll) checks after reading the
 * CQs that carried the peer's write. An abrupt disconnect flushes what waits.</li>
 * </ul>
 *
 * <p>Not on libfabric's verbs provider: an RC queue pair holds a send for which the responder has no
 * receive posted by itself (the responder answers receiver-not-ready and the requester retries
 * without end: libfabric's verbs connects with {@code rnr_retry_count = 7}, {@code verbs_cm.c}), which is
 * DAT's outstanding send, and an abrupt disconnect flushes it; so a verbs EP's receives are not
 * counted (the header says so) and its peer sends freely. The closing flag below serves verbs too.
 *
 * <p>RDM connections carry the same credits on their data endpoints ({@code RDM_PROTOCOL.md}): a
 * send there goes without delivery-complete once it has a credit. On shm the words are in a file of
 * {@code /dev/shm} both JVMs map ({@link SharedCreditWords}, header flag 2): the count and the closing
 * flag are stores into the peer's mapping, not writes through libfabric.
 *
 * <p>The words are written only by the peer (its provider, or its stores on shm) and read here; counts
 * are cumulative, so a late or repeated write is harmless. The header is {@link #HEADER} bytes: magic, version (3), flags
 * (1: counted), a reserved byte, the words' address (0 where the provider addresses regions by
 * offset) and key. The words: [0] the credit word, [16] the closing flag.
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
    private static final Logger LOG = LoggerFactory.getLogger(MsgCredits.class);
    /** The header before the consumer's private data of a connect or accept. */
    static final int HEADER = 20;
    private static final byte MAGIC = 0x4a;
    private static final byte VERSION = 3;
    private static final byte COUNTS = 1;
    /** The words are in a file of {@code /dev/shm} ({@link SharedCreditWords}): address and key are its pid and number. */
    private static final byte SHARED = 2;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final long INJECT = 1L << 25; // FI_INJECT

    /** The peer's part of a header; {@code counts} whether its receives are counted. */
    record Peer(boolean valid, boolean counts, boolean shared, long address, long key) {
        static final Peer NONE = new Peer(false, false, false, 0, 0);
    }

    private final OfiIa ia;
    private final Arena arena = Arena.ofShared();
    /**
     * [0] the credit word (the peer's count); [8] the count to write; [16] the closing flag (the
     * peer's); [24] 1, to write.
     */
    private final MemorySegment mem;
    private final MemorySegment iov;
    private final MemorySegment desc;
    private final MemorySegment rmaIov;
    private final MemorySegment msg;
    private final long mr;
    private final long key;
    private final boolean counts;
    /** shm: this side's words in {@code /dev/shm}, null where they are registered for remote writes. */
    private final SharedCreditWords.Own own;
    /** shm: the peer's words, mapped here (its count and closing flag are stored into them), else null. */
    private MemorySegment peerWords;
    private Peer peer = Peer.NONE;
    private boolean connected;
    private long posted;
    private long sent;
    private boolean announceDue;
    /** The functions of the endpoint written on last. */
    private FiCalls.EpFunctions fns;

    /** Registers the words; {@code counts} whether this EP's receives are its own (no SRQ). */
    MsgCredits(OfiIa ia, boolean counts) {
        this.ia = ia;
        this.counts = counts;
        own = ia.rdm != null && ia.rdm.named ? SharedCreditWords.create(arena) : null;
        mem = own != null ? own.words() : arena.allocate(64, 64);
        iov = arena.allocate(16, 8);
        desc = arena.allocate(8, 8);
        rmaIov = arena.allocate(FI_RMA_IOV.size(), 8);
        msg = arena.allocate(FI_MSG_RMA.size(), 8);
        if (own != null) {
            mr = 0;
            key = own.number();
        } else {
            try {
                mr = FiCalls.mrReg(ia.domain, mem.address(), 32, Fi.FI_READ | Fi.FI_WRITE | Fi.FI_REMOTE_WRITE, 0,
                        OfiLmr.nextKey(), 0);
            } catch (FiException e) {
                arena.close();
                throw FiErrors.toDat(e);
            }
            key = FiCalls.word(mr + MR_KEY);
        }
        iov.set(ValueLayout.JAVA_LONG, IOV_BASE, mem.address() + 8);
        iov.set(ValueLayout.JAVA_LONG, IOV_LEN, 8);
        desc.set(ValueLayout.JAVA_LONG, 0, mr != 0 ? FiCalls.word(mr + MR_MEM_DESC) : 0);
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
        b[2] = (byte) ((counts ? COUNTS : 0) | (own != null ? SHARED : 0));
        long address = own != null ? own.pid() : (ia.mrMode & Fi.FI_MR_VIRT_ADDR) != 0 ? mem.address() : 0;
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
        return new Peer(true, (data[2] & COUNTS) != 0, (data[2] & SHARED) != 0, address, k);
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
        announceDue = true;
        return announce(fid);
    }

    /** Writes the count of posted receives into the peer's word if it is due; false if it must be tried again. */
    boolean announce(long fid) {
        if (!announceDue || !connected || !counts || !peer.valid() || fid == 0) {
            return true;
        }
        long count = posted;
        if (peer.shared()) {
            if (peerWords == null && !mapPeerWords()) {
                return false;
            }
            LONG.setRelease(peerWords, 0L, count); // after the receive is in the provider's queue
            announceDue = false;
            return true;
        }
        mem.set(ValueLayout.JAVA_LONG, 8, count);
        iov.set(ValueLayout.JAVA_LONG, IOV_BASE, mem.address() + 8);
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_ADDR, peer.address());
        long rc = write(fid, INJECT);
        if (rc == -Fi.FI_EAGAIN) {
            return false;
        }
        announceDue = false;
        return true;
    }

    /**
     * Maps the peer's words named in its header; false (tried again by the IA's progress, {@link
     * HeldRequests#pump}) if its file is not there: a peer that gave up before this side's accept
     * removed it, and its hub answers the ACCEPT with ABORT (CONN_07, DISC_12, FREE_03).
     */
    private boolean mapPeerWords() {
        try {
            peerWords = SharedCreditWords.mapPeer(peer.address(), peer.key(), arena);
            return true;
        } catch (IOException | RuntimeException e) {
            LOG.debug("the peer's credit words: {}", e.toString());
            return false;
        }
    }

    /** {@code fi_writemsg} of {@link #msg} on the endpoint {@code fid}, its functions resolved once per endpoint. */
    private long write(long fid, long flags) {
        fns = FiCalls.EpFunctions.of(fns, fid);
        return fns.writemsg(msg.address(), flags);
    }

    /**
     * Whether a signalled write to the peer can follow unsignalled requests ({@link #drain}): the
     * connection is established with a peer that named its words.
     */
    boolean drains() {
        return connected && peer.valid() && peerWords == null;
    }

    /**
     * The drain of a graceful disconnect after unsignalled requests ({@link EpData#drainSilentTail}):
     * writes 1 into the peer's word [24], which holds 1 whenever it is read (the source of its
     * closing write), with {@code flags} ({@code FI_COMPLETION} and delivery-complete where the
     * provider has it) and the context {@code ctx}; on a MSG endpoint its completion comes after
     * every request posted before it. The call's return code (the EP's lock is held).
     */
    long drain(long fid, long ctx, long flags) {
        mem.set(ValueLayout.JAVA_LONG, 24, 1);
        iov.set(ValueLayout.JAVA_LONG, IOV_BASE, mem.address() + 24);
        rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_ADDR, peer.address() + 24);
        msg.set(ValueLayout.JAVA_LONG, MSG_RMA_CONTEXT, ctx);
        long rc = write(fid, flags);
        msg.set(ValueLayout.JAVA_LONG, MSG_RMA_CONTEXT, 0);
        return rc;
    }

    /**
     * This side ends the connection (the EP's lock is held): the peer's closing flag is written, ahead
     * of the {@code fi_shutdown} that follows. Nothing more is written after it.
     */
    void closing(long fid) {
        if (connected && peerWords != null) {
            LONG.setRelease(peerWords, 16L, 1L);
        } else if (connected && peer.valid() && fid != 0) {
            mem.set(ValueLayout.JAVA_LONG, 24, 1);
            iov.set(ValueLayout.JAVA_LONG, IOV_BASE, mem.address() + 24);
            rmaIov.set(ValueLayout.JAVA_LONG, RMA_IOV_ADDR, peer.address() + 16);
            write(fid, INJECT);
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

    /** Whether the peer counts its receives (its header says so): a send leaves on a credit. */
    boolean peerCounts() {
        return peer.valid() && peer.counts();
    }

    /** Whether a send may leave now (a credit is there, or the peer's receives are not counted). */
    boolean maySend() {
        if (!peer.valid() || !peer.counts()) {
            return true;
        }
        VarHandle.acquireFence();
        return mem.get(ValueLayout.JAVA_LONG, 0) - sent > 0;
    }

    /** A send was handed to libfabric. */
    void sent() {
        sent++;
    }

    /** Closes the credit word's registration (after the endpoint is closed). */
    void close() {
        if (mr != 0) {
            OfiIa.closeQuietly(mr);
        }
        arena.close();
        if (own != null) {
            SharedCreditWords.close(own.path());
        }
    }
}
