package org.jdapl.provider.ofi;

import org.jdapl.dat.Dat;
import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DtoOperation;
import org.jdapl.dat.DtoStatus;
import org.jdapl.dat.EpCounter;
import org.jdapl.dat.ExtensionType;
import org.jdapl.dat.Endpoint;
import org.jdapl.dat.EventNumber;

/**
 * What an EP on an SRQ has of its own: the CQ its endpoint's receives complete on (libfabric writes a
 * shared context's receive to the CQ of the endpoint that took it, so a CQ per EP tells the EP; the
 * EP's receive EVD reads it beside its own), and the count of receives the EP took from the SRQ, with
 * the soft high watermark over it ({@code dat_ep_set_watermark}): armed by each setting, the first
 * time the count exceeds it, during the call or when the EP takes a receive, an
 * {@link EventNumber#ASYNC_SRQ_SOFT_HIGH_WATERMARK} event naming the EP with
 * {@link Dat#SRQ_SOFT_HIGH_WATERMARK_EVENT} goes to the IA's asynchronous EVD. The hard high watermark
 * is kept only (no connection is broken for it).
 *
 * <p>Behaviours: EP_01, EP_02.
 */
final class EpSrq {
    final OfiSrq srq;
    private final OfiEp ep;
    private final CqReader reader;
    private final CqReader.Sink sink;
    final long cq;
    /** The CQ's wait file descriptor ({@code FI_WAIT_FD}), -1 without one. */
    final int waitFd;
    private final long[] taken = new long[2];
    private volatile OfiEvd evd;
    private int buffersUsed;
    private long bytesUsed;
    private int softHighWatermark = Dat.WATERMARK_INFINITE;
    private int hardHighWatermark = Dat.HW_DEFAULT;
    private boolean softArmed;

    EpSrq(OfiEp ep, OfiSrq srq, int cqSize, int softHighWatermark) {
        this.ep = ep;
        this.srq = srq;
        this.reader = new CqReader(ep.ia, cqSize);
        this.sink = new CqReader.Sink() {
            @Override
            public void completed(long context, int err, long len) {
                ep.srqCompleted(context, err, len);
            }

            @Override
            public void completedWithData(long context, long data) {
                ep.srqCompletedWithData(context, data);
            }
        };
        this.cq = reader.cq;
        this.waitFd = reader.waitFd;
        if (softHighWatermark >= 0) {
            this.softHighWatermark = softHighWatermark;
            softArmed = true;
        }
    }

    /** The receive EVD that reads this CQ (null: none). */
    void attach(OfiEvd e) {
        OfiEvd old = evd;
        if (old == e) {
            return;
        }
        if (old != null) {
            old.srqCq(this, false);
        }
        evd = e;
        if (e != null) {
            e.srqCq(this, true);
        }
    }

    /** Reads a batch of the CQ's completions (the receive EVD's reader); the number read. */
    int poll() {
        return reader.read(sink);
    }

    /**
     * A receive of the SRQ completed on this EP (the EP's lock held): retired from the SRQ, counted as
     * taken, its event queued on the receive EVD. False if it names no live receive of the SRQ.
     */
    boolean completed(long context, int err, long len) {
        if (err == CANCELED && srq.rdm != null) {
            srq.giveBack(context, this); // RDM: its endpoint closed before it took the receive
            return false;
        }
        if (!took(context)) {
            return false;
        }
        OfiEvd e = ep.recvEvd();
        if (e != null) {
            DtoStatus status = err == 0 ? DtoStatus.SUCCESS : FiErrors.dtoStatus(err, true);
            e.enqueueDto(ep, taken[0], status, err == 0 ? len : 0, DtoOperation.RECEIVE, false);
        }
        return true;
    }

    /**
     * A receive of the SRQ that an RDMA Write with immediate data consumed (its CQ data carries the
     * write's length and the immediate data, {@link OfiExtensions}): RDMA_WRITE_IMMED_DATA.
     * Behaviours: EXT_05.
     */
    boolean completedWithData(long context, long cqData) {
        if (!took(context)) {
            return false;
        }
        ep.counts.inc(EpCounter.RECV_RDMA_IMM, cqData >>> 32);
        OfiEvd e = ep.recvEvd();
        if (e != null) {
            e.enqueue(new DatEvent.ExtendedDtoCompletion(e, ep, taken[0], DtoStatus.SUCCESS, cqData >>> 32,
                    ExtensionType.RDMA_WRITE_IMMED_DATA, (int) cqData, null));
        }
        return true;
    }

    /** {@code FI_ECANCELED}: a receive still posted when its endpoint closed. */
    private static final int CANCELED = 125;

    /**
     * RDM ({@link RdmSrq}): the EP's data endpoint {@code fid} is open, bound to this CQ; the SRQ lends
     * it receives.
     */
    void opened(long fid) {
        srq.borrower(this, fid);
    }

    /**
     * RDM: closes the EP's data endpoint in {@code close}, with this CQ's lock held; what the CQ holds
     * then is read (receives taken complete, receives cancelled go back to the SRQ), and the receives
     * still lent to the endpoint go back to the SRQ and its other EPs. The EP's lock is held.
     */
    void closing(Runnable close) {
        srq.borrower(this, 0);
        reader.withLocked(() -> {
            close.run();
            int guard = 0;
            while (reader.read(sink) > 0 && guard++ < 100_000) {
                // what the endpoint completed before and at its close
            }
        });
        srq.returnAll(this);
    }

    /** Runs {@code r} (an endpoint bound to this CQ and enabled) with the CQ's lock held. */
    void withCqLocked(Runnable r) {
        reader.withLocked(r);
    }

    private boolean took(long context) {
        if (!srq.take(context, taken, this)) {
            return false;
        }
        buffersUsed++;
        bytesUsed += taken[1];
        checkSoftHighWatermark();
        return true;
    }

    Endpoint.RecvQuery recvQuery() {
        return new Endpoint.RecvQuery(buffersUsed, (int) Math.min(Integer.MAX_VALUE, bytesUsed));
    }

    /** EP_01, EP_02: sets both watermarks and arms the soft one (the EP's lock held). */
    void setWatermark(int soft, int hard) {
        if (soft < Dat.WATERMARK_INFINITE || hard < Dat.WATERMARK_INFINITE) {
            throw DatException.invalidParameter(2, "watermarks are -1 (infinite) or 0 and more");
        }
        softHighWatermark = soft;
        hardHighWatermark = hard;
        softArmed = soft != Dat.WATERMARK_INFINITE;
        checkSoftHighWatermark();
    }

    int hardHighWatermark() {
        return hardHighWatermark;
    }

    private void checkSoftHighWatermark() {
        if (softArmed && buffersUsed > softHighWatermark) {
            softArmed = false;
            ep.ia.asyncEvd.enqueue(new DatEvent.AsyncError(ep.ia.asyncEvd, EventNumber.ASYNC_SRQ_SOFT_HIGH_WATERMARK, ep,
                    Dat.SRQ_SOFT_HIGH_WATERMARK_EVENT, "the EP took " + buffersUsed
                    + " receive(s) from its SRQ, over its soft high watermark " + softHighWatermark));
        }
    }

    /**
     * The EP is freed (its endpoint closed): what the CQ still holds is retired from the SRQ without
     * events, then the CQ is closed.
     */
    void close() {
        attach(null);
        reader.close(ep.ia, (context, err, len) -> srq.take(context, taken, this));
    }
}
