package org.jdapl.provider.ofi;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EpState;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.PublicServicePoint;
import org.jdapl.dat.ReservedServicePoint;

/**
 * A PSP: a listener whose requests the consumer accepts on EPs of its choosing. Provider-created EPs
 * ({@link PspFlag#PROVIDER}) are not offered.
 */
final class OfiPsp extends OfiListener implements PublicServicePoint {
    private final PspFlag flag;

    private OfiPsp(OfiIa ia, long connQual, OfiEvd evd, PspFlag flag) {
        super(ia, HandleType.PSP, connQual, evd);
        this.flag = flag;
    }

    static OfiPsp create(OfiIa ia, long connQual, OfiEvd evd, PspFlag flag, Object unused) {
        if (flag == null) {
            throw DatException.invalidParameter(3, "null PSP flag");
        }
        if (flag == PspFlag.PROVIDER) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "the ofi provider does not create EPs for a PSP");
        }
        return new OfiPsp(ia, connQual, evd, flag);
    }

    static ReservedServicePoint createRsp(OfiIa ia, long connQual, OfiEp ep, OfiEvd evd) {
        synchronized (ep) {
            if (ep.conn.state() != EpState.UNCONNECTED) {
                throw DatException.invalidState(EpConnection.subtype(ep.conn.state()), "dat_rsp_create on an EP in "
                        + ep.conn.state());
            }
            Rsp r = new Rsp(ia, connQual, ep, evd);
            ep.conn.setState(EpState.RESERVED);
            return r;
        }
    }

    @Override
    public PspParam query() {
        live();
        return new PspParam(ia, connQual, evd, flag);
    }

    /** An RSP: a listener for one request, on the EP it reserves. */
    static final class Rsp extends OfiListener implements ReservedServicePoint {
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

        /** The RSP is used up by its request: its handle is freed at once, its passive endpoint when the CR is done. */
        @Override
        void consumed() {
            stopListening();
        }

        @Override
        void requestDone() {
            closePep();
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
