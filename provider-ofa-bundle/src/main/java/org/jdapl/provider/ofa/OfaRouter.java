package org.jdapl.provider.ofa;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatHandle;
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
 * themselves here as they create and destroy their verbs and rdma_cm resources. It is made with what
 * it needs from its IA (name, device, channels, private data convention) and knows the IA and the
 * objects it dispatches to only as the small interfaces below ({@link Owner}, {@link QueuePairOwner},
 * {@link DatagramQueuePair}, {@link CmEvents}, {@link ServicePoint}).
 */
final class OfaRouter implements OfaEventLoop.Handler, CmProgress.Taker {
    private static final Logger LOG = LoggerFactory.getLogger(OfaRouter.class);
    /** The routers of each device context (one per IA of a process), for the context's async events. */
    private static final Map<Long, Set<OfaRouter>> BY_CONTEXT = new ConcurrentHashMap<>();

    private final Owner ia;
    /** The IA's name, for the log. */
    private final String name;
    private final OfaDevice device;
    /** The IA's completion channel, whose CQ events {@link #completions} takes. */
    private final MemorySegment compChannel;
    /** The IA's rdma_cm event channel, or NULL without librdmacm. */
    private final MemorySegment cmChannel;
    /** The IA's private data convention, for connect requests nobody takes. */
    private final PrivateData wire;
    /** CQ address to EVD, for completion events. */
    private final Map<Long, OfaEvd> evdByCq = new ConcurrentHashMap<>();
    /** QP number to EP, for work completions. */
    private final Map<Integer, QueuePairOwner> epByQpNum = new ConcurrentHashMap<>();
    /** QP address to EP, for QP async events. */
    private final Map<Long, QueuePairOwner> epByQp = new ConcurrentHashMap<>();
    /** rdma_cm ID address to the connection of the EP that owns it, for rdma_cm events. */
    private final Map<Long, CmEvents> connectionByCmId = new ConcurrentHashMap<>();
    /** rdma_cm ID address to an unanswered request: what it does when the active side withdraws it. */
    private final Map<Long, Runnable> crByCmId = new ConcurrentHashMap<>();
    /** QP number to datagram endpoint, for work completions. */
    private final Map<Integer, DatagramQueuePair> udByQpNum = new ConcurrentHashMap<>();
    /** rdma_cm ID address to a UD exchange under way. */
    private final Map<Long, CmEvents> udByCmId = new ConcurrentHashMap<>();
    /** SRQ address to what the SRQ does when its limit is reached (SRQ async events). */
    private final Map<Long, Runnable> srqBySrq = new ConcurrentHashMap<>();
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

    /** The IA as its device events need it: whether it is closed, and its async EVD. */
    interface Owner extends DatHandle {
        boolean isFreed();

        /** The EVD of the IA's asynchronous errors. */
        OfaEvd asyncEvd();
    }

    /** An EP's connection or a UD exchange, as its rdma_cm ID's events reach it (event thread, or a poller). */
    interface CmEvents {
        void cmEvent(RdmaCm.CmEvent e);
    }

    /** An RC EP as its queue pair's work completions and device events reach it. */
    interface QueuePairOwner {
        int qpNum();

        boolean isFreed();

        /** A work completion of the queue pair, polled from {@code evd}'s CQ (poll lock held). */
        void completed(OfaEvd evd, long wc, long wrId);

        /** The device broke the queue pair or its port: the connection breaks on the event thread (DISC_17). */
        void brokenLater(String what);
    }

    /** A datagram EP as its queue pair's work completions reach it. */
    interface DatagramQueuePair {
        /** A work completion of the queue pair, polled from {@code evd}'s CQ (poll lock held). */
        void completed(OfaEvd evd, long wc);
    }

    /**
     * The router of {@code ia}, named {@code name}, on {@code device}, whose CQ events come on
     * {@code compChannel} and rdma_cm events on {@code cmChannel} (NULL: none); requests nobody takes
     * are refused with the private data of {@code wire}.
     */
    OfaRouter(Owner ia, String name, OfaDevice device, MemorySegment compChannel, MemorySegment cmChannel,
              PrivateData wire) {
        this.ia = ia;
        this.name = name;
        this.device = device;
        this.compChannel = compChannel;
        this.cmChannel = cmChannel;
        this.wire = wire;
    }

    void start() {
        BY_CONTEXT.computeIfAbsent(device.context.pointer().address(), k -> ConcurrentHashMap.newKeySet()).add(this);
    }

    /** After the event thread has stopped. */
    void stop() {
        cmProgress.close();
        Set<OfaRouter> peers = BY_CONTEXT.get(device.context.pointer().address());
        if (peers != null) {
            peers.remove(this);
        }
        buffers.close();
    }

    void addCq(MemorySegment cq, OfaEvd evd) {
        evdByCq.put(cq.address(), evd);
    }

    void removeCq(MemorySegment cq) {
        evdByCq.remove(cq.address());
    }

    void addQp(QueuePairOwner ep, MemorySegment qp, int qpNum) {
        epByQpNum.put(qpNum, ep);
        epByQp.put(qp.address(), ep);
    }

    void removeQp(QueuePairOwner ep, MemorySegment qp, int qpNum) {
        epByQpNum.remove(qpNum, ep);
        epByQp.remove(qp.address(), ep);
    }

    void addUdQp(DatagramQueuePair ep, int qpNum) {
        udByQpNum.put(qpNum, ep);
    }

    void removeUdQp(DatagramQueuePair ep, int qpNum) {
        udByQpNum.remove(qpNum, ep);
    }

    void addUdCm(MemorySegment cmId, CmEvents x) {
        udByCmId.put(cmId.address(), x);
    }

    void removeUdCm(MemorySegment cmId) {
        udByCmId.remove(cmId.address());
    }

    java.util.Collection<CmEvents> udExchanges() {
        return List.copyOf(udByCmId.values());
    }

    void addSrq(MemorySegment srq, Runnable limitReached) {
        srqBySrq.put(srq.address(), limitReached);
    }

    void removeSrq(MemorySegment srq) {
        srqBySrq.remove(srq.address());
    }

    void addCmId(MemorySegment cmId, CmEvents connection) {
        connectionByCmId.put(cmId.address(), connection);
    }

    void removeCmId(MemorySegment cmId) {
        connectionByCmId.remove(cmId.address());
    }

    void addCr(MemorySegment cmId, Runnable withdrawn) {
        crByCmId.put(cmId.address(), withdrawn);
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
        MemorySegment channel = compChannel;
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
        private QueuePairOwner lastEp;

        Route(OfaEvd evd) {
            this.evd = evd;
        }

        @Override
        public void completion(long wc) {
            int qpNum = WorkCompletion.qpNum(wc);
            QueuePairOwner ep = lastEp;
            if (ep == null || ep.qpNum() != qpNum || ep.isFreed()) {
                ep = epByQpNum.get(qpNum);
                lastEp = ep;
            }
            if (ep == null) {
                DatagramQueuePair ud = udByQpNum.get(qpNum);
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
            LOG.debug("IA {}: device event {}", name, what);
            for (OfaRouter other : BY_CONTEXT.getOrDefault(device.context.pointer().address(), Set.of(this))) {
                other.deviceEvent(type, element, what);
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
                QueuePairOwner ep = epByQp.get(element);
                if (ep != null) {
                    ep.brokenLater(what);
                }
            }
            case 4 -> LOG.debug("IA {}: communication established on a queue pair", name); // IBV_EVENT_COMM_EST
            case 15 -> { // IBV_EVENT_SRQ_LIMIT_REACHED: the SRQ's low watermark (the device disarmed it)
                Runnable limitReached = srqBySrq.get(element);
                if (limitReached != null) {
                    limitReached.run();
                }
            }
            case 10 -> { // IBV_EVENT_PORT_ERR: the link is down, every connection of the port is broken
                if ((int) element == device.port) {
                    for (QueuePairOwner ep : List.copyOf(epByQp.values())) {
                        ep.brokenLater("port " + device.port + " down");
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
        if (cmChannel.address() == 0) {
            return false;
        }
        RdmaCm cm = RdmaCm.get();
        RdmaCm.Pending p = cm.getCmEvent(cmChannel, cmEventSlot);
        if (p == null) {
            return false;
        }
        RdmaCm.CmEvent e = p.event();
        cm.ack(p);
        try {
            dispatch(e);
        } catch (RuntimeException x) {
            LOG.warn("IA {}: handling rdma_cm event {} failed", name, e.name(), x);
        }
        return true;
    }

    private void dispatch(RdmaCm.CmEvent e) {
        if (e.event() == RdmaCm.EVENT_CONNECT_REQUEST) {
            connectRequest(e);
            return;
        }
        CmEvents ud = udByCmId.get(e.id().address());
        if (ud != null) {
            ud.cmEvent(e);
            return;
        }
        CmEvents connection = connectionByCmId.get(e.id().address());
        if (connection != null) {
            connection.cmEvent(e);
            return;
        }
        Runnable withdrawn = crByCmId.get(e.id().address());
        if (withdrawn != null) {
            if (e.event() != RdmaCm.EVENT_ESTABLISHED && e.event() != RdmaCm.EVENT_TIMEWAIT_EXIT) {
                withdrawn.run();
            }
            return;
        }
        LOG.debug("IA {}: rdma_cm event {} (status {}) for no object", name, e.name(), e.status());
    }

    /** A connect request at a PSP, RSP or CSP: a CR event on its EVD, or a provider reject if nobody takes it. */
    private void connectRequest(RdmaCm.CmEvent e) {
        ServicePoint sp = listeners.get(e.listenId().address());
        InetSocketAddress from = RdmaCm.destinationAddress(e.id());
        int localPort = RdmaCm.sourceAddress(e.id()).getPort();
        byte[] data = wire.received(e.privateData());
        if (sp == null || !sp.request(e, from, localPort, data)) {
            rejectQuietly(e.id(), wire);
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
