package org.jdapl.provider.emu;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.HashMap;
import java.util.Map;

import org.jdapl.dat.DatEvent;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.EpState;
import org.jdapl.dat.EvdFlag;
import org.jdapl.dat.PspFlag;
import org.jdapl.dat.ServicePoint;

/**
 * The service points of one IA that connection requests arrive at (guarded by its domain lock): PSPs
 * and RSPs by connection qualifier, CSPs by port, and the delivery of a request to one of them as a
 * connection request event.
 */
final class Listeners {
    private final EmuIa ia;
    private final Map<Long, EmuObject> byQual = new HashMap<>();
    private final Map<Integer, EmuCsp> byPort = new HashMap<>();
    private long nextAnyQual = 0x4000_0000L;

    Listeners(EmuIa ia) {
        this.ia = ia;
    }

    /**
     * Fails if {@code qual} is taken (OBJ_06).
     *
     * @throws DatException CONN_QUAL_IN_USE
     */
    void checkFree(long qual) {
        if (byQual.containsKey(qual)) {
            throw new DatException(DatReturnType.CONN_QUAL_IN_USE, "connection qualifier " + qual
                    + " is in use on IA " + ia.name());
        }
    }

    /** A free qualifier for {@code dat_psp_create_any}. */
    long anyQual() {
        long qual = nextAnyQual;
        while (byQual.containsKey(qual)) {
            qual++;
        }
        nextAnyQual = qual + 1;
        return qual;
    }

    /** {@code dat_psp_create}. Behaviours: OBJ_06: a qualifier in use fails CONN_QUAL_IN_USE. */
    EmuPsp createPsp(long connQual, EmuEvd crEvd, PspFlag flag) {
        if (flag == null) {
            throw DatException.invalidParameter(4, "no PSP flag");
        }
        checkFree(connQual);
        return listen(connQual, new EmuPsp(ia, connQual, crEvd, flag));
    }

    /** {@code dat_psp_create_any}: a free qualifier from {@code 0x40000000} up. */
    EmuPsp createPspAny(EmuEvd crEvd, PspFlag flag) {
        if (flag == null) {
            throw DatException.invalidParameter(3, "no PSP flag");
        }
        long qual = anyQual();
        return listen(qual, new EmuPsp(ia, qual, crEvd, flag));
    }

    /** {@code dat_rsp_create}: the UNCONNECTED {@code ep} is RESERVED for requests on {@code connQual}. */
    EmuRsp createRsp(long connQual, EmuEp ep, EmuEvd crEvd) {
        if (ep.state() != EpState.UNCONNECTED) {
            throw ep.state().invalid("dat_rsp_create");
        }
        checkFree(connQual);
        ep.connection().reserve();
        return listen(connQual, new EmuRsp(ia, connQual, crEvd, ep));
    }

    /** {@code dat_cr_create} of a CSP: the fabric listens on {@code address} (port 0: a free port). */
    EmuCsp createCsp(SocketAddress address, EmuEvd crEvd) {
        InetSocketAddress bound = ia.fabric().listenCommon(ia, address, this::portTaken);
        return listenCommon(bound.getPort(), new EmuCsp(ia, bound, crEvd));
    }

    <T extends EmuObject> T listen(long qual, T point) {
        byQual.put(qual, point);
        return point;
    }

    boolean portTaken(int port) {
        return byPort.containsKey(port);
    }

    EmuCsp listenCommon(int port, EmuCsp csp) {
        byPort.put(port, csp);
        return csp;
    }

    boolean isListening(long qual) {
        return byQual.containsKey(qual);
    }

    /** {@code point} stops listening on {@code qual}; a PSP free stops new requests at once (OBJ_06). */
    void stop(long qual, EmuObject point) {
        byQual.remove(qual, point);
    }

    /** The CSP on {@code port} stops listening, and so does the fabric for it. */
    void stopCommon(int port, EmuCsp csp) {
        if (byPort.remove(port, csp)) {
            ia.fabric().stopCommon(port);
        }
    }

    void clear() {
        byQual.clear();
        byPort.clear();
    }

    /** The EVD of the consumer PSP on {@code qual}, where UD exchange requests arrive, or null. */
    EmuEvd udEvd(long qual) {
        return !ia.isFreed() && byQual.get(qual) instanceof EmuPsp p && p.flag() != PspFlag.PROVIDER ? p.evd() : null;
    }

    /**
     * A connection request of {@code inbound} arrives on {@code qual} (a CSP port when {@code common}):
     * a CR is created (with a provider EP for a PROVIDER PSP, the reserved EP of an RSP) and
     * CONNECTION_REQUEST_EVENT is posted on the service point's EVD (CONN_10, CONN_11).
     *
     * @return false if nobody listens there or the backlog is full: the active side is NON_PEER_REJECTED
     *         (CONN_05)
     */
    boolean deliver(Inbound inbound, long qual, boolean common, byte[] privateData, SocketAddress from, long fromPort) {
        if (ia.isFreed()) {
            return false;
        }
        EmuEvd evd;
        ServicePoint point;
        EmuEp localEp = null;
        EmuPsp psp = null;
        if (common) {
            EmuCsp csp = qual > 0 && qual <= 0xffff ? byPort.get((int) qual) : null;
            if (csp == null) {
                return false;
            }
            evd = csp.evd();
            point = csp;
        } else {
            EmuObject listener = byQual.get(qual);
            if (listener instanceof EmuPsp p) {
                if (p.backlogFull()) {
                    return false;
                }
                psp = p;
                evd = p.evd();
                point = p;
                if (p.flag() == PspFlag.PROVIDER) {
                    localEp = ia.adopt(new EmuEp(ia, null, null, null, evd.accepts(EvdFlag.CONNECTION) ? evd : null,
                            null, EpAttributes.defaults(), EpState.TENTATIVE_CONNECTION_PENDING, true));
                }
            } else if (listener instanceof EmuRsp r) {
                evd = r.evd();
                point = null;
                localEp = r.ep();
                r.destroy();
                ia.forget(r);
            } else {
                return false;
            }
        }
        EmuCr cr = ia.adopt(new EmuCr(ia, inbound, qual, from, fromPort, privateData, localEp, psp));
        if (localEp != null) {
            localEp.connection().requestArrived(cr);
        }
        inbound.delivered();
        ia.post(evd, new DatEvent.ConnectionRequest(evd, point, ia.address(), qual, cr, false), true);
        return true;
    }
}
