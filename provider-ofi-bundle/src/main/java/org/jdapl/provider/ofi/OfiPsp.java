package org.jdapl.provider.ofi;

import org.jdapl.dat.DatException;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.ReservedServicePoint;

/**
 * A PSP: a service point whose requests the consumer accepts on EPs of its choosing, or, with
 * {@link PspFlag#PROVIDER}, on the EP the provider creates for each request; and the RSP
 * ({@link Rsp}), a service point for one request on the EP it reserves. Both on MSG and on RDM
 * endpoints ({@link OfiServicePoint}).
 *
 * <p>Behaviours: DISC_11, FREE_02, FREE_07.
 */
final class OfiPsp extends OfiServicePoint implements PublicServicePoint {
    private final PspFlag flag;

    private OfiPsp(OfiIa ia, long connQual, OfiEvd evd, PspFlag flag) {
        super(ia, HandleType.PSP, connQual, evd);
        this.flag = flag;
    }

    static OfiPsp create(OfiIa ia, long connQual, OfiEvd evd, PspFlag flag) {
        if (flag == null) {
            throw DatException.invalidParameter(3, "null PSP flag");
        }
        return new OfiPsp(ia, connQual, evd, flag);
    }

    static ReservedServicePoint createRsp(OfiIa ia, long connQual, OfiEp ep, OfiEvd evd) {
        synchronized (ep) {
            if (ep.conn.state() != EpState.UNCONNECTED) {
                throw DatException.invalidState(Connection.subtype(ep.conn.state()), "dat_rsp_create on an EP in "
                        + ep.conn.state());
            }
            Rsp r = new Rsp(ia, connQual, ep, evd);
            ep.conn.setState(EpState.RESERVED);
            return r;
        }
    }

    /**
     * With {@link PspFlag#PROVIDER}, each request gets an EP of the provider's, as OFED's cma provider
     * does: no PZ and no DTO EVDs, the PSP's EVD as connect EVD if it has the connection stream, in
     * TENTATIVE_CONNECTION_PENDING. The consumer gives it a PZ and EVDs with dat_ep_modify and accepts
     * (the endpoint is created then); a reject frees it.
     */
    @Override
    OfiEp reservedEp() {
        if (flag != PspFlag.PROVIDER) {
            return null;
        }
        OfiEp ep = new OfiEp(ia, null, null, null, evd.has(EvdFlag.CONNECTION) ? evd : null, EpAttributes.defaults());
        ep.conn.setState(EpState.TENTATIVE_CONNECTION_PENDING);
        return ep;
    }

    @Override
    public PspParam query() {
        live();
        return new PspParam(ia, connQual, evd, flag);
    }

    /** An RSP: a service point for one request, on the EP it reserves. */
    static final class Rsp extends OfiServicePoint implements ReservedServicePoint {
        private final OfiEp ep;

        Rsp(OfiIa ia, long connQual, OfiEp ep, OfiEvd evd) {
            super(ia, HandleType.RSP, connQual, evd);
            this.ep = ep;
        }

        @Override
        OfiEp reservedEp() {
            synchronized (ep) {
                ep.conn.setState(EpState.PASSIVE_CONNECTION_PENDING);
            }
            return ep;
        }

        /** The RSP is used up by its request: its handle is freed at once, its endpoint when the CR is done. */
        @Override
        void consumed() {
            freed = true;
            listener.stop();
            evd.users.decrementAndGet();
            ia.removed(this);
        }

        @Override
        void requestDone() {
            listener.close();
        }

        @Override
        public RspParam query() {
            live();
            return new RspParam(ia, connQual, evd, ep);
        }

        @Override
        synchronized void destroy() {
            boolean was = freed;
            super.destroy();
            if (!was) {
                synchronized (ep) {
                    if (ep.conn.state() == EpState.RESERVED) {
                        ep.conn.setState(EpState.UNCONNECTED);
                    }
                }
            }
        }
    }
}
