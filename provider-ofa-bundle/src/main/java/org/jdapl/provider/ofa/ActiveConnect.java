package org.jdapl.provider.ofa;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.provider.ofa.verbs.VerbsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an EP's {@code dat_ep_connect} needs ready and what it leaves running: the EP's next rdma_cm
 * ID, created on the IA's event channel and bound to the IA address when the EP is created or reset
 * (as OFED's cma provider creates the ID with the EP), so that the connect itself makes one call,
 * {@code rdma_resolve_addr}, and its local port is known at once; the private data of the
 * REQ as it goes on the wire; and the connect time-out. Guarded by the EP's lock.
 *
 * <p>Behaviours: CONN_02, CONN_07.
 */
final class ActiveConnect {
    private static final Logger LOG = LoggerFactory.getLogger(ActiveConnect.class);

    /** The IA whose event channel the IDs are made on. */
    private final OfaIa ia;
    private final OfaEventLoop loop;
    /** The EP, for the log. */
    private final Object ep;
    /** A bound ID no connection has used yet, or NULL. */
    private MemorySegment spare = MemorySegment.NULL;
    private byte[] privateDataWire = new byte[0];
    private OfaEventLoop.Timer timer;

    ActiveConnect(OfaIa ia, OfaEventLoop loop, Object ep) {
        this.ia = ia;
        this.loop = loop;
        this.ep = ep;
    }

    /**
     * Creates and binds the next ID if there is none. If that fails (no rdma_cm, no free port), the
     * EP is made all the same: {@link #take} tries again and reports the error to the connect.
     */
    void prepare() {
        if (spare.address() != 0 || ia.cmChannel().address() == 0) {
            return;
        }
        try {
            spare = CmIds.bound(ia.cmChannel(), ia.inetAddress(), 0, "dat_ep_create");
        } catch (RuntimeException e) {
            LOG.debug("EP {}: no rdma_cm ID ahead of a connect; the connect makes one", ep, e);
        }
    }

    /** The bound ID of a connect: the prepared one, or one made now. */
    MemorySegment take() {
        MemorySegment id = spare;
        spare = MemorySegment.NULL;
        if (id.address() != 0) {
            return id;
        }
        try {
            return CmIds.bound(ia.cmChannel(), ia.inetAddress(), 0, "dat_ep_connect");
        } catch (VerbsException e) {
            throw NativeErrors.resources(DatReturnSubtype.NO_SUBTYPE, "dat_ep_connect (rdma_bind_addr)", e);
        }
    }

    void wire(byte[] data) {
        privateDataWire = data;
    }

    /** The REQ's private data as it goes on the wire. */
    byte[] wire() {
        return privateDataWire;
    }

    /** Runs {@code task} on the event thread after {@code micros}, unless {@link #cancelTimer} comes first. */
    void startTimer(long micros, Runnable task) {
        timer = loop.schedule(TimeUnit.MICROSECONDS.toNanos(micros), task);
    }

    void cancelTimer() {
        if (timer != null) {
            timer.cancel();
            timer = null;
        }
    }

    /** At {@code dat_ep_free}: the timer stops and the unused ID goes. */
    void release() {
        cancelTimer();
        if (spare.address() != 0) {
            CmIds.destroyQuietly(spare);
            spare = MemorySegment.NULL;
        }
    }
}
