package org.jdapl.provider.ofi;

/**
 * Where an EVD's CQ hands its completions ({@link CqReader.Sink}): to the EP that the operation's
 * context names ({@link DtoQueue#epId}, looked up in the IA's EPs), which queues its event on the
 * EVD; a completion of an EP no longer there is dropped.
 */
final class EpCompletions implements CqReader.Sink {
    private final OfiIa ia;

    EpCompletions(OfiIa ia) {
        this.ia = ia;
    }

    @Override
    public void completed(long context, int err, long len) {
        OfiEp ep = ia.eps.get(DtoQueue.epId(context));
        if (ep != null) {
            ep.completed(context, err, len);
        }
    }

    /** A receive that an RDMA Write with immediate data consumed ({@link OfiExtensions}). */
    @Override
    public void completedWithData(long context, long cqData) {
        OfiEp ep = ia.eps.get(DtoQueue.epId(context));
        if (ep != null) {
            ep.completedWithData(context, cqData);
        }
    }
}
