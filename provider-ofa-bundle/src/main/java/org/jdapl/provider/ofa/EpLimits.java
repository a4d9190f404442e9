package org.jdapl.provider.ofa;

import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.EpAttributes;
import org.jdapl.dat.Qos;

/** EP attributes against a device's limits: the defaults within them, the checks of a consumer's. */
final class EpLimits {
    private EpLimits() {
    }

    /**
     * The attributes with the largest RDMA size lowered to the port's message size limit (an RDMA
     * Read or Write is one message on the wire); {@code dat_ep_query} shows the value in force.
     */
    static EpAttributes withinRdmaLimit(OfaDevice device, EpAttributes a) {
        if (a.maxRdmaSize() <= device.maxMsgSize) {
            return a;
        }
        return new EpAttributes(a.maxMessageSize(), device.maxMsgSize, a.qos(), a.recvCompletionFlags(),
                a.requestCompletionFlags(), a.maxRecvDtos(), a.maxRequestDtos(), a.maxRecvIov(), a.maxRequestIov(),
                a.maxRdmaReadIn(), a.maxRdmaReadOut(), a.srqSoftHighWatermark());
    }

    /**
     * The attributes of a datagram endpoint: the largest message lowered to the path MTU, the most one
     * UD send carries (a longer datagram is refused at the post, INVALID_PARAMETER);
     * {@code dat_ep_query} and {@code maxDatagramSize} show the value in force. Behaviours: EXT_11.
     */
    static EpAttributes datagram(OfaDevice device, EpAttributes a) {
        if (a.maxMessageSize() <= device.activeMtu) {
            return a;
        }
        return new EpAttributes(device.activeMtu, a.maxRdmaSize(), a.qos(), a.recvCompletionFlags(),
                a.requestCompletionFlags(), a.maxRecvDtos(), a.maxRequestDtos(), a.maxRecvIov(), a.maxRequestIov(),
                a.maxRdmaReadIn(), a.maxRdmaReadOut(), a.srqSoftHighWatermark());
    }

    /** {@link EpAttributes#defaults()} within the device's limits. */
    static EpAttributes defaults(OfaDevice device) {
        EpAttributes d = EpAttributes.defaults();
        int depth = Math.min(256, device.maxQpWr);
        int sge = Math.min(d.maxRequestIov(), device.maxSge);
        return new EpAttributes(Math.min(d.maxMessageSize(), device.maxMsgSize),
                Math.min(d.maxRdmaSize(), device.maxMsgSize), d.qos(), d.recvCompletionFlags(),
                d.requestCompletionFlags(), depth, depth, sge, sge, Math.min(d.maxRdmaReadIn(), device.maxQpRdAtom),
                Math.min(d.maxRdmaReadOut(), device.maxQpInitRdAtom), d.srqSoftHighWatermark());
    }

    /** INVALID_PARAMETER for sizes over the device's limits, MODEL_NOT_SUPPORTED for QoS. Behaviours: CONN_09. */
    static void check(OfaDevice device, EpAttributes a) {
        if (a.maxRequestDtos() > device.maxQpWr || a.maxRecvDtos() > device.maxQpWr) {
            throw DatException.invalidParameter(6, "queue depth over the device's " + device.maxQpWr);
        }
        if (a.maxRequestIov() > device.maxSge || a.maxRecvIov() > device.maxSge) {
            throw DatException.invalidParameter(6, "segments per DTO over the device's " + device.maxSge);
        }
        if (a.maxMessageSize() > device.maxMsgSize || a.maxRdmaSize() > device.maxMsgSize) {
            throw DatException.invalidParameter(6, "message size over the port's " + device.maxMsgSize);
        }
        if (a.maxRdmaReadIn() > device.maxQpRdAtom || a.maxRdmaReadOut() > device.maxQpInitRdAtom) {
            throw DatException.invalidParameter(6, "RDMA Reads in flight over the device's limits");
        }
        if (a.qos() != Qos.BEST_EFFORT) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "QoS " + a.qos() + " is not supported");
        }
    }
}
