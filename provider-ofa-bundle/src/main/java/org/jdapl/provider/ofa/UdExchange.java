package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.jdapl.dat.ConnectionRequest;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.IaCounter;
import org.jdapl.provider.ofa.UdAddressing.OfaAh;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;
import org.jdapl.provider.ofa.verbs.Structs.RdmaConnParam;
import org.jdapl.provider.ofa.verbs.VerbsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A UD exchange over rdma_cm's RDMA_PS_UDP port space (SIDR), as OFED's uDAPL does it. The active
 * side ({@link #connect}): an ID of its own, address and route resolution, {@code rdma_connect}; the
 * ESTABLISHED event carries the passive endpoint's address vector, queue pair and qkey
 * ({@code param.ud}), from which the address handle is made (IB_UD_CONNECTION_ESTABLISHED,
 * UD_REMOTE_AH); a consumer's reject (a SIDR reply with status IB_SIDR_REJECT, which rdma_cm reports
 * as UNREACHABLE with that status) is IB_UD_CONNECTION_REJECT with the rejecter's private data;
 * anything else (nobody listening: IB_SIDR_UNSUPPORTED; no route; a time-out) is
 * IB_UD_CONNECTION_ERROR. A PSP listens in RDMA_PS_UDP on its port too ({@link #listening}); a
 * request there is IB_UD_CONNECTION_REQUEST with a {@link Request}, whose accept sends the SIDR
 * reply with the accepting endpoint's queue pair and gives it the active side's handle
 * (UD_PASSIVE_REMOTE_AH). A SIDR request carries no address vector nor the requester's queue pair:
 * the private data carries the queue pair ahead of the consumer's bytes
 * ({@code [qpn: 4][length: 1][data]}), the address is the request's source.
 *
 * <p>Behaviours: EXT_08, EXT_10.
 */
final class UdExchange implements OfaRouter.CmEvents {
    private static final Logger LOG = LoggerFactory.getLogger(UdExchange.class);
    /** IB_SIDR_REJECT: the status of a SIDR reply that rejects. */
    private static final int SIDR_REJECT = 2;
    private static final int RESOLVE_MILLIS = 2000;
    private static final int PROVIDER_FLAG = 0x80;

    private final OfaUdEp ep;
    private final MemorySegment id;
    private final byte[] wire;
    private final InetAddress peer;
    private boolean done;

    private UdExchange(OfaUdEp ep, MemorySegment id, byte[] wire, InetAddress peer) {
        this.ep = ep;
        this.id = id;
        this.wire = wire;
        this.peer = peer;
    }

    /** Starts the exchange of {@code ep} (its lock held) with the PSP at {@code to}. */
    static void connect(OfaUdEp ep, InetSocketAddress to, byte[] data) {
        OfaIa ia = ep.ia;
        if (ia.cmChannel().address() == 0) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "dat_ep_connect (UD) needs rdma_cm");
        }
        RdmaCm cm = RdmaCm.get();
        MemorySegment id;
        try {
            id = cm.createId(ia.cmChannel(), RdmaCm.PS_UDP);
        } catch (VerbsException e) {
            throw NativeErrors.resources(DatReturnSubtype.NO_SUBTYPE, "dat_ep_connect (UD: rdma_create_id)", e);
        }
        byte[] wire = ByteBuffer.allocate(5 + data.length).putInt(ep.qpNum()).put((byte) data.length).put(data).array();
        UdExchange x = new UdExchange(ep, id, wire, to.getAddress());
        ia.router().addUdCm(id, x);
        try (Arena a = Arena.ofConfined()) {
            cm.bindAddr(id, new InetSocketAddress(ia.inetAddress().getAddress(), 0));
            cm.resolveAddr(id, RdmaCm.sockaddr(a.allocate(RdmaCm.SOCKADDR_SIZE, 8), to), RESOLVE_MILLIS);
        } catch (VerbsException e) {
            // Unreachable at once: the error is the exchange's event, as for a late failure.
            LOG.debug("UD exchange to {}: {}", to, e.getMessage());
            ia.loop().schedule(0, () -> x.end(EventNumber.IB_UD_CONNECTION_ERROR, ExtensionType.UD_CONNECT_ERROR,
                    null, null));
        }
    }

    /** An rdma_cm event of the exchange's ID (event thread, or a consumer taking rdma_cm events). */
    @Override
    public void cmEvent(RdmaCm.CmEvent e) {
        RdmaCm cm = RdmaCm.get();
        try {
            switch (e.event()) {
                case RdmaCm.EVENT_ADDR_RESOLVED -> cm.resolveRoute(id, RESOLVE_MILLIS);
                case RdmaCm.EVENT_ROUTE_RESOLVED -> {
                    try (Arena a = Arena.ofConfined()) {
                        MemorySegment param = a.allocate(RdmaConnParam.S.size(), 8);
                        MemorySegment pd = a.allocate(wire.length, 8);
                        MemorySegment.copy(MemorySegment.ofArray(wire), 0, pd, 0, wire.length);
                        RdmaConnParam.PRIVATE_DATA.setPointer(param, pd);
                        RdmaConnParam.PRIVATE_DATA_LEN.setU8(param, wire.length);
                        RdmaConnParam.QP_NUM.setInt(param, ep.qpNum());
                        cm.connect(id, param);
                    }
                }
                case RdmaCm.EVENT_ESTABLISHED -> {
                    OfaAh ah = null;
                    if (e.ud() != null) {
                        ep.lock.lock();
                        try {
                            if (!ep.isFreed()) {
                                ah = ep.addressing.fromCm(e.ud(), peer);
                            }
                        } finally {
                            ep.lock.unlock();
                        }
                    }
                    end(ah != null ? EventNumber.IB_UD_CONNECTION_ESTABLISHED : EventNumber.IB_UD_CONNECTION_ERROR,
                            ah != null ? ExtensionType.UD_REMOTE_AH : ExtensionType.UD_CONNECT_ERROR, ah,
                            decode(e.privateData()));
                }
                default -> {
                    byte[] rejected = e.status() == SIDR_REJECT ? consumerData(e.privateData()) : null;
                    if (rejected != null) {
                        end(EventNumber.IB_UD_CONNECTION_REJECT, ExtensionType.UD_CONNECT_REJECT, null, rejected);
                    } else {
                        LOG.debug("UD exchange to {}: {} (status {})", peer, e.name(), e.status());
                        end(EventNumber.IB_UD_CONNECTION_ERROR, ExtensionType.UD_CONNECT_ERROR, null, null);
                    }
                }
            }
        } catch (VerbsException | DatException x) {
            LOG.debug("UD exchange to {} failed", peer, x);
            end(EventNumber.IB_UD_CONNECTION_ERROR, ExtensionType.UD_CONNECT_ERROR, null, null);
        }
    }

    /** The exchange's one event, then its ID goes (once). */
    private void end(EventNumber number, ExtensionType type, OfaAh ah, byte[] data) {
        synchronized (this) {
            if (done) {
                return;
            }
            done = true;
        }
        ep.exchanged(number, type, ah, data);
        ep.ia.router().removeUdCm(id);
        // The event was acknowledged before it was dispatched: the ID can go from here.
        ep.ia.loop().schedule(0, () -> CmIds.destroyQuietly(id));
    }

    /** The endpoint is freed: its exchanges under way end without an event. */
    static void forget(OfaUdEp ep) {
        for (OfaRouter.CmEvents c : ep.ia.router().udExchanges()) {
            if (c instanceof UdExchange x && x.ep == ep) {
                synchronized (x) {
                    if (x.done) {
                        continue;
                    }
                    x.done = true;
                }
                ep.ia.router().removeUdCm(x.id);
                CmIds.destroyQuietly(x.id);
            }
        }
    }

    /** A reply's private data: the consumer's bytes of {@code [length][data]}. */
    private static byte[] decode(byte[] wire) {
        if (wire.length == 0) {
            return wire;
        }
        int len = wire[0] & 0x7f;
        return len > wire.length - 1 ? new byte[0] : Arrays.copyOfRange(wire, 1, 1 + len);
    }

    /** A reject's private data if a consumer rejected (no provider flag), else null. */
    private static byte[] consumerData(byte[] wire) {
        if (wire.length == 0 || (wire[0] & PROVIDER_FLAG) != 0 || (wire[0] & 0x7f) > wire.length - 1) {
            return null;
        }
        return decode(wire);
    }

    private static byte[] encode(byte[] data) {
        byte[] w = new byte[data.length + 1];
        w[0] = (byte) data.length;
        System.arraycopy(data, 0, w, 1, data.length);
        return w;
    }

    // ---- the passive side ----

    /** The PSP's RDMA_PS_UDP listening ID on {@code port}, or null if rdma_cm refuses it (no UD requests then). */
    static MemorySegment listening(OfaIa ia, int port) {
        RdmaCm cm = RdmaCm.get();
        MemorySegment id;
        try {
            id = cm.createId(ia.cmChannel(), RdmaCm.PS_UDP);
        } catch (VerbsException e) {
            LOG.debug("IA {}: no RDMA_PS_UDP listener on port {}", ia.name(), port, e);
            return null;
        }
        try {
            cm.bindAddr(id, new InetSocketAddress(ia.inetAddress().getAddress(), port));
            cm.listen(id, 1024);
            return id;
        } catch (VerbsException e) {
            LOG.debug("IA {}: no RDMA_PS_UDP listener on port {}", ia.name(), port, e);
            CmIds.destroyQuietly(id);
            return null;
        }
    }

    /** A SIDR request at PSP {@code psp} (IA lock held): IB_UD_CONNECTION_REQUEST on its EVD. */
    static boolean requested(OfaPsp psp, RdmaCm.CmEvent e, InetSocketAddress from) {
        byte[] w = e.privateData();
        if (w.length < 5 || (w[4] & 0xff) > w.length - 5) {
            return false;
        }
        int qpn = ByteBuffer.wrap(w).getInt() & 0xff_ffff;
        byte[] data = Arrays.copyOfRange(w, 5, 5 + (w[4] & 0xff));
        Request r = new Request(psp.ia, e.id(), from, qpn, data, psp.connQual);
        psp.ia.objects().add(HandleType.CR, r);
        psp.ia.objects().count(IaCounter.SP_CR);
        psp.evd.enqueue(new DatEvent.UdConnection(psp.evd, EventNumber.IB_UD_CONNECTION_REQUEST, null,
                ExtensionType.UD_CONNECT_REQUEST, null, r, data));
        return true;
    }

    /** A UD request at a PSP: accepted with a datagram endpoint, or rejected. */
    static final class Request extends OfaHandle implements ConnectionRequest, IaObjects.Owned {
        private final OfaIa ia;
        private final MemorySegment id;
        private final InetSocketAddress from;
        private final int qpn;
        private final byte[] data;
        private final long connQual;

        Request(OfaIa ia, MemorySegment id, InetSocketAddress from, int qpn, byte[] data, long connQual) {
            super(HandleType.CR);
            this.ia = ia;
            this.id = id;
            this.from = from;
            this.qpn = qpn;
            this.data = data;
            this.connQual = connQual;
        }

        @Override
        public CrParam query() {
            live();
            return new CrParam(from, qpn, data.clone(), null);
        }

        /** The SIDR reply with the endpoint's queue pair; the endpoint gets the requester's handle. */
        @Override
        public void accept(Endpoint ep, byte[] acceptData) {
            live();
            byte[] pd = ia.wire.check(acceptData, 3);
            if (!(ep instanceof OfaUdEp passive) || passive.ia != ia || passive.isFreed()) {
                throw DatException.invalidParameter(2, "a UD request is accepted with a live datagram endpoint of IA "
                        + ia.name());
            }
            OfaAh ah;
            ia.lock().lock();
            try {
                live();
                passive.lock.lock();
                try {
                    passive.requireExchanging("dat_cr_accept");
                    ah = passive.addressing.toAddress(from.getAddress(), qpn);
                } finally {
                    passive.lock.unlock();
                }
                try (Arena a = Arena.ofConfined()) {
                    byte[] w = encode(pd);
                    MemorySegment param = a.allocate(RdmaConnParam.S.size(), 8);
                    MemorySegment seg = a.allocate(Math.max(1, w.length), 8);
                    MemorySegment.copy(MemorySegment.ofArray(w), 0, seg, 0, w.length);
                    RdmaConnParam.PRIVATE_DATA.setPointer(param, seg);
                    RdmaConnParam.PRIVATE_DATA_LEN.setU8(param, w.length);
                    RdmaConnParam.QP_NUM.setInt(param, passive.qpNum());
                    RdmaCm.get().accept(id, param);
                } catch (VerbsException e) {
                    throw new DatException(DatReturnType.INTERNAL_ERROR, DatReturnSubtype.NO_SUBTYPE,
                            "dat_cr_accept (UD: rdma_accept)", e);
                }
                ia.objects().count(IaCounter.SP_CR_ACCEPTED);
                consume();
            } finally {
                ia.lock().unlock();
            }
            passive.exchanged(EventNumber.IB_UD_CONNECTION_ESTABLISHED, ExtensionType.UD_PASSIVE_REMOTE_AH, ah, data);
        }

        /** A SIDR reply with status IB_SIDR_REJECT and the consumer's bytes. */
        @Override
        public void reject(byte[] rejectData) {
            live();
            byte[] pd = ia.wire.check(rejectData, 1);
            ia.lock().lock();
            try {
                live();
                try {
                    RdmaCm.get().reject(id, encode(pd));
                } catch (VerbsException e) {
                    LOG.debug("rdma_reject (UD) failed", e);
                }
                ia.objects().count(IaCounter.SP_CR_REJECTED);
                consume();
            } finally {
                ia.lock().unlock();
            }
        }

        @Override
        public void handoff(long connQual) {
            live();
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "dat_cr_handoff of a UD request");
        }

        /** IA close of an unanswered request: a provider reject. */
        @Override
        public void destroy() {
            if (isFreed()) {
                return;
            }
            try {
                RdmaCm.get().reject(id, new byte[] {(byte) PROVIDER_FLAG});
            } catch (VerbsException e) {
                LOG.debug("rdma_reject (UD) failed", e);
            }
            consume();
        }

        private void consume() {
            ia.objects().release(this);
            CmIds.destroyQuietly(id);
        }
    }
}
