package org.jdapl.provider.emu;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.jdapl.dat.CompletionFlag;
import org.jdapl.dat.Dat;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EventNumber;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.LmrTriplet;
import org.jdapl.dat.MemPriv;
import org.jdapl.dat.SharedReceiveQueue;
import org.jdapl.dat.SrqAttributes;
import org.jdapl.dat.SrqState;

/**
 * An emulated Shared Receive Queue: receives any of its EPs consumes, in posting order. A receive
 * taken by an EP completes on that EP's receive EVD. Receives still queued when the SRQ is freed
 * are flushed (reported to nobody: no EP owns them).
 *
 * <p>The low watermark ({@code dat_srq_set_lw}, or the attribute at creation; 0 is none) is armed
 * when it is set: the first time the receives on the SRQ drop below it, during the call or when an
 * EP takes one, an {@link EventNumber#ASYNC_SRQ_LOW_WATERMARK} event with this SRQ and
 * {@link Dat#SRQ_LOW_WATERMARK_EVENT} goes to the IA's asynchronous EVD, and the watermark is
 * disarmed until it is set again.
 *
 * <p>Behaviours: SRQ_01, SRQ_02, SRQ_03.
 */
final class EmuSrq extends EmuObject implements SharedReceiveQueue {
    private final EmuIa ia;
    private final EmuPz pz;
    private final int maxRecvIov;
    private final ArrayDeque<WorkRequest.Recv> queue = new ArrayDeque<>();
    private final Set<EmuEp> eps = new LinkedHashSet<>();
    private int maxRecvDtos;
    private int lowWatermark;
    /** Whether the low watermark event is still to be raised for the current setting. */
    private boolean lowWatermarkArmed;

    EmuSrq(EmuIa ia, EmuPz pz, SrqAttributes attributes) {
        super(HandleType.SRQ);
        this.ia = ia;
        this.pz = pz;
        this.maxRecvDtos = attributes.maxRecvDtos();
        this.maxRecvIov = attributes.maxRecvIov();
        this.lowWatermark = attributes.lowWatermark();
        this.lowWatermarkArmed = lowWatermark > 0;
    }

    @Override
    EmuIa ia() {
        return ia;
    }

    EmuPz pz() {
        return pz;
    }

    void attach(EmuEp ep) {
        eps.add(ep);
    }

    void detach(EmuEp ep) {
        eps.remove(ep);
    }

    WorkRequest.Recv peek() {
        return queue.peekFirst();
    }

    /** Takes the first receive for an EP (domain lock held); SRQ_01: may cross the low watermark. */
    WorkRequest.Recv take() {
        WorkRequest.Recv r = queue.pollFirst();
        if (r != null) {
            checkLowWatermark();
        }
        return r;
    }

    /** SRQ_01, SRQ_02: raises the event once per setting, when fewer receives than the watermark remain. */
    private void checkLowWatermark() {
        if (lowWatermarkArmed && queue.size() < lowWatermark) {
            lowWatermarkArmed = false;
            ia.raiseAsync(EventNumber.ASYNC_SRQ_LOW_WATERMARK, this, Dat.SRQ_LOW_WATERMARK_EVENT,
                    queue.size() + " receive(s) on the SRQ, below its low watermark " + lowWatermark);
        }
    }

    @Override
    public SrqParam query() {
        return ia.locked(() -> {
            checkLive();
            return new SrqParam(ia, SrqState.OPERATIONAL, pz, maxRecvDtos, maxRecvIov, lowWatermark, queue.size(), 0);
        });
    }

    @Override
    public void free() {
        ia.locked(() -> {
            checkLive();
            if (!eps.isEmpty()) {
                throw DatException.invalidState(DatReturnSubtype.INVALID_STATE_SRQ_IN_USE,
                        eps.size() + " EP(s) use the SRQ");
            }
            destroy();
            ia.forget(this);
        });
    }

    void destroy() {
        queue.forEach(WorkRequest::markCompleted);
        queue.clear();
        markFreed();
        pz.unuse();
    }

    @Override
    public void postRecv(List<LmrTriplet> iov, long cookie) {
        ia.locked(() -> {
            checkLive();
            List<LmrTriplet> checked = Segments.check(ia, pz, iov, MemPriv.LOCAL_WRITE, maxRecvIov, 2);
            if (queue.size() >= maxRecvDtos) {
                throw new DatException(DatReturnType.INSUFFICIENT_RESOURCES, DatReturnSubtype.RESOURCE_SRQ,
                        "the SRQ holds " + maxRecvDtos + " receives");
            }
            queue.addLast(new WorkRequest.Recv(checked, Segments.total(checked), cookie, Set.<CompletionFlag>of()));
            for (EmuEp ep : new ArrayList<>(eps)) {
                ep.receiveAvailable();
            }
        });
    }

    @Override
    public void resize(int newMax) {
        ia.locked(() -> {
            checkLive();
            if (newMax < 1 || newMax > EmuLimits.MAX_RECV_PER_SRQ || newMax < queue.size()) {
                throw DatException.invalidParameter(2, "SRQ size " + newMax + " is not in " + Math.max(1, queue.size())
                        + ".." + EmuLimits.MAX_RECV_PER_SRQ);
            }
            maxRecvDtos = newMax;
        });
    }

    @Override
    public void setLowWatermark(int lw) {
        ia.locked(() -> {
            checkLive();
            if (lw < 0 || lw > maxRecvDtos) {
                throw DatException.invalidParameter(2, "low watermark " + lw + " is not in 0.." + maxRecvDtos);
            }
            lowWatermark = lw;
            lowWatermarkArmed = lw > 0;
            checkLowWatermark();
        });
    }
}
