package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.EventNumber;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;
import org.jdapl.provider.ofa.verbs.Structs.IbvAsyncEvent;
import org.jdapl.provider.ofa.verbs.Verbs;
import org.jdapl.provider.ofa.verbs.VerbsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The demultiplexing of one IA: which EVD a CQ event is for, which EP a work completion or a QP
 * event names, which EP, request or service point an rdma_cm event is for; and the event thread's
 * handlers that use these maps ({@link OfaEventLoop.Handler}). Objects register and unregister
 * themselves here as they create and destroy their verbs and rdma_cm resources.
 */
final class OfaRouter implements OfaEventLoop.Handler, CmProgress.Taker {
    private static final Logger LOG = LoggerFactory.getLogger(OfaRouter.class);
    /** The IAs of each device context (shared by the IAs of a process), for the context's async events. */
    private static final Map<Long, Set<OfaIa>> BY_CONTEXT = new ConcurrentHashMap<>();

    private final OfaIa ia;
    private final OfaDevice device;
    /** CQ address to EVD, for completion events. */
    private final Map<Long, OfaEvd> evdByCq = new ConcurrentHashMap<>();
    /** QP number to EP, for work completions. */
    private final Map<Integer, OfaEp> epByQpNum = new ConcurrentHashMap<>();
    /** QP address to EP, for QP async events. */
    private final Map<Long, OfaEp> epByQp = new ConcurrentHashMap<>();
    /** rdma_cm ID address to the EP that owns it, for rdma_cm events. */
    private final Map<Long, OfaEp> epByCmId = new ConcurrentHashMap<>();
    /** rdma_cm ID address to an unanswered request. */
    private final Map<Long, OfaCr> crByCmId = new ConcurrentHashMap<>();
    /** QP number to datagram endpoint, for work completions. */
    private final Map<Integer, OfaUdEp> udByQpNum = new ConcurrentHashMap<>();
    /** rdma_cm ID address to a UD exchange under way. */
    private final Map<Long, UdExchange> udByCmId = new ConcurrentHashMap<>();
    /** SRQ address to SRQ, for SRQ async events. */
    private final Map<Long, OfaSrq> srqBySrq = new ConcurrentHashMap<>();
    /** Listening rdma_cm ID address to its service point. */
    private final Map<Long, ServicePoint> listeners = new ConcurrentHashMap<>();
    /** Native buffers of the event thread, freed at close. */
    private final Arena buffers = Arena.ofShared();
    private final MemorySegment asyncEvent = buffers.allocate(IbvAsyncEvent.S.size(), 8);
    /** Where rdma_get_cm_event writes the event's address. */
    private final MemorySegment cmEventSlot = buffers.allocate(8, 8);
    /** Who takes the rdma_cm events: the event thread, or a consumer busy-polling (manual progress). */
    private final CmProgress cmProgress = new CmProgress(this);

    /** A PSP, RSP or CSP: what a connect request at its listening ID becomes. */
    interface ServicePoint {
        /** A connect request arrived at the service point's ID (event thread); false to refuse it. */
        boolean request(RdmaCm.CmEvent e, InetSocketAddress from, int localPort, byte[] data);
    }

    OfaRouter(OfaIa ia, OfaDevice device) {
        this.ia = ia;
        this.device = device;
    }

    void start() {
        BY_CONTEXT.computeIfAbsent(device.context.pointer().address(), k -> ConcurrentHashMap.newKeySet()).add(ia);
    }

    /** After the event thread has stopped. */
    void stop() {
        cmProgress.close();
        Set<OfaIa> peers = BY_CONTEXT.get(device.context.pointer().address());
        if (peers != null) {
            peers.remove(ia);
        }
        buffers.close();
    }

    void addCq(MemorySegment cq, OfaEvd evd) {
        evdByCq.put(cq.address(), evd);
    }

    void removeCq(MemorySegment cq) {
        evdByCq.remove(cq.address());
    }

    void addQp(OfaEp ep, MemorySegment qp, int qpNum) {
        epByQpNum.put(qpNum, ep);
        epByQp.put(qp.address(), ep);
    }

    void removeQp(OfaEp ep, MemorySegment qp, int qpNum) {
        epByQpNum.remove(qpNum, ep);
        epByQp.remove(qp.address(), ep);
    }

    void addUdQp(OfaUdEp ep, int qpNum) {
        udByQpNum.put(qpNum, ep);
    }

    void removeUdQp(OfaUdEp ep, int qpNum) {
        udByQpNum.remove(qpNum, ep);
    }

    void addUdCm(MemorySegment cmId, UdExchange x) {
        udByCmId.put(cmId.address(), x);
    }

    void removeUdCm(MemorySegment cmId) {
        udByCmId.remove(cmId.address());
    }

    java.util.Collection<UdExchange> udExchanges() {
        return List.copyOf(udByCmId.values());
    }

    void addSrq(MemorySegment srq, OfaSrq s) {
        srqBySrq.put(srq.address(), s);
    }

    void removeSrq(MemorySegment srq) {
        srqBySrq.remove(srq.address());
    }

    void addCmId(MemorySegment cmId, OfaEp ep) {
        epByCmId.put(cmId.address(), ep);
    }

    void removeCmId(MemorySegment cmId) {
        epByCmId.remove(cmId.address());
    }

    void addCr(MemorySegment cmId, OfaCr cr) {
        crByCmId.put(cmId.address(), cr);
    }

    void removeCr(MemorySegment cmId) {
        crByCmId.remove(cmId.address());
    }

    void addListener(MemorySegment id, ServicePoint sp) {
        listeners.put(id.address(), sp);
    }

    void removeListener(MemorySegment id) {
        listeners.remove(id.address());
    }

    // ---- completions ----

    @Override
    public void completions() {
        Verbs v = Verbs.get();
        MemorySegment channel = ia.compChannel();
        while (true) {
            MemorySegment cq = v.getCqEvent(channel);
            if (cq.address() == 0) {
                return;
            }
            // Acknowledge before anything else: ibv_destroy_cq waits for it.
            v.ackCqEvents(cq, 1);
            OfaEvd evd = evdByCq.get(cq.address());
            if (evd != null) {
                evd.cqEvent();
            }
        }
    }

    /** Where the work completions of {@code evd}'s CQ go: {@link Route}. */
    EvdCq.Completions route(OfaEvd evd) {
        return new Route(evd);
    }

    /**
     * The route of one EVD's CQ: each work completion polled from it (poll lock held) to the EP it
     * names, which makes it an event of the EVD. It keeps the EP of the last completion, as most CQs
     * serve one or two queue pairs.
     */
    private final class Route implements EvdCq.Completions {
        private final OfaEvd evd;
        /** The EP of the last completion polled. Guarded by the CQ's poll lock. */
        private OfaEp lastEp;

        Route(OfaEvd evd) {
            this.evd = evd;
        }

        @Override
        public void completion(long wc) {
            int qpNum = WorkCompletion.qpNum(wc);
            OfaEp ep = lastEp;
            if (ep == null || ep.qpNum() != qpNum || ep.isFreed()) {
                ep = epByQpNum.get(qpNum);
                lastEp = ep;
            }
            if (ep == null) {
                OfaUdEp ud = udByQpNum.get(qpNum);
                if (ud != null) {
                    ud.completed(evd, wc);
                }
                return; // else an EP freed with completions still in the CQ
            }
            ep.completed(evd, wc, WorkCompletion.wrId(wc));
        }
    }

    // ---- device events ----

    /** Device events: routed to the IAs of the context (port events) or the EP of the QP (QP events). */
    @Override
    public void asyncEvents() {
        Verbs v = Verbs.get();
        while (v.getAsyncEvent(device.context.pointer(), asyncEvent)) {
            int type = IbvAsyncEvent.EVENT_TYPE.getInt(asyncEvent);
            long element = IbvAsyncEvent.ELEMENT.getLong(asyncEvent);
            String what = v.eventTypeStr(type);
            v.ackAsyncEvent(asyncEvent);
            LOG.debug("IA {}: device event {}", ia.name(), what);
            for (OfaIa other : BY_CONTEXT.getOrDefault(device.context.pointer().address(), Set.of(ia))) {
                other.router().deviceEvent(type, element, what);
            }
        }
    }

    /**
     * One device event for this IA (DISC_17: a broken QP or port breaks its connections; SRQ_01: an
     * SRQ's limit reached is its low watermark event).
     *
     * <p>Behaviours: DISC_17, SRQ_01.
     */
    private void deviceEvent(int type, long element, String what) {
        if (ia.isFreed()) {
            return;
        }
        OfaEvd async = ia.asyncEvd();
        switch (type) {
            case 1, 2, 3 -> { // IBV_EVENT_QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR: that connection is broken
                OfaEp ep = epByQp.get(element);
                if (ep != null) {
                    ia.loop().schedule(0, () -> ep.connection().broken(what));
                }
            }
            case 4 -> LOG.debug("IA {}: communication established on a queue pair", ia.name()); // IBV_EVENT_COMM_EST
            case 15 -> { // IBV_EVENT_SRQ_LIMIT_REACHED: the SRQ's low watermark (the device disarmed it)
                OfaSrq srq = srqBySrq.get(element);
                if (srq != null) {
                    srq.limitReached();
                }
            }
            case 10 -> { // IBV_EVENT_PORT_ERR: the link is down, every connection of the port is broken
                if ((int) element == device.port) {
                    for (OfaEp ep : List.copyOf(epByQp.values())) {
                        ia.loop().schedule(0, () -> ep.connection().broken("port " + device.port + " down"));
                    }
                    async.enqueue(new DatEvent.AsyncError(async, EventNumber.ASYNC_ERROR_PROVIDER_INTERNAL_ERROR,
                            ia, type, what + " (port " + device.port + ")"));
                }
            }
            case 8 -> async.enqueue(new DatEvent.AsyncError(async, EventNumber.ASYNC_ERROR_IA_CATASTROPHIC,
                    ia, type, what));
            case 0 -> async.enqueue(new DatEvent.AsyncError(async, EventNumber.ASYNC_ERROR_EVD_OVERFLOW,
                    ia, type, what));
            default -> {
                // port active, GID, LID, SM and client events are informational
            }
        }
    }

    // ---- rdma_cm events ----

    /** Who takes the rdma_cm events (a consumer polling an EVD without a CQ calls its {@link CmProgress#poll}). */
    CmProgress cmProgress() {
        return cmProgress;
    }

    /**
     * The rdma_cm channel is readable (event thread): one event. One per wake-up, as OFED's cma
     * provider takes them: the channel stays readable while more are queued, so the loop's next
     * {@code poll(2)} returns at once for the next one, and no {@code rdma_get_cm_event} is spent finding
     * the channel empty (a system call per wake-up, and a connection's establishment wakes each side
     * three or four times).
     */
    @Override
    public void cmEvents() {
        cmProgress.take();
    }

    @Override
    public long cmLeaseNanos() {
        return cmProgress.leaseLeft();
    }

    /**
     * Takes one event off the channel, copied and acknowledged before it is dispatched (rdma_destroy_id
     * waits for that), and dispatches it; called under {@link CmProgress}'s lock, by the event thread or
     * a polling consumer.
     */
    @Override
    public boolean takeCmEvent() {
        if (ia.cmChannel().address() == 0) {
            return false;
        }
        RdmaCm cm = RdmaCm.get();
        RdmaCm.Pending p = cm.getCmEvent(ia.cmChannel(), cmEventSlot);
        if (p == null) {
            return false;
        }
        RdmaCm.CmEvent e = p.event();
        cm.ack(p);
        try {
            dispatch(e);
        } catch (RuntimeException x) {
            LOG.warn("IA {}: handling rdma_cm event {} failed", ia.name(), e.name(), x);
        }
        return true;
    }

    private void dispatch(RdmaCm.CmEvent e) {
        if (e.event() == RdmaCm.EVENT_CONNECT_REQUEST) {
            connectRequest(e);
            return;
        }
        UdExchange ud = udByCmId.get(e.id().address());
        if (ud != null) {
            ud.cmEvent(e);
            return;
        }
        OfaEp ep = epByCmId.get(e.id().address());
        if (ep != null) {
            ep.connection().cmEvent(e);
            return;
        }
        OfaCr cr = crByCmId.get(e.id().address());
        if (cr != null) {
            if (e.event() != RdmaCm.EVENT_ESTABLISHED && e.event() != RdmaCm.EVENT_TIMEWAIT_EXIT) {
                cr.withdrawn();
            }
            return;
        }
        LOG.debug("IA {}: rdma_cm event {} (status {}) for no object", ia.name(), e.name(), e.status());
    }

    /** A connect request at a PSP, RSP or CSP: a CR event on its EVD, or a provider reject if nobody takes it. */
    private void connectRequest(RdmaCm.CmEvent e) {
        ServicePoint sp = listeners.get(e.listenId().address());
        InetSocketAddress from = RdmaCm.destinationAddress(e.id());
        int localPort = RdmaCm.sourceAddress(e.id()).getPort();
        byte[] data = ia.wire.received(e.privateData());
        if (sp == null || !sp.request(e, from, localPort, data)) {
            rejectQuietly(e.id(), ia.wire);
        }
    }

    /** Refuses a request nobody takes: a provider reject (NON_PEER_REJECTED at the active side). */
    static void rejectQuietly(MemorySegment id, PrivateData wire) {
        RdmaCm cm = RdmaCm.get();
        try {
            cm.reject(id, wire.providerReject());
        } catch (VerbsException x) {
            LOG.debug("rdma_reject failed", x);
        }
        try {
            cm.destroyId(id);
        } catch (VerbsException x) {
            LOG.debug("rdma_destroy_id failed", x);
        }
    }
}
