package org.jdapl.provider.ofa;

import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import org.jdapl.dat.ConnectFlag;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnSubtype;
import org.jdapl.dat.DatReturnType;
import org.jdapl.dat.Endpoint.EpParam;
import org.jdapl.dat.EpState;
import org.jdapl.dat.Qos;

/**
 * The checks of the arguments of {@code dat_ep_connect}, {@code dat_ep_common_connect} and
 * {@code dat_ep_dup_connect} before anything is created.
 */
final class ConnectArguments {
    private ConnectArguments() {
    }

    /** CONN_09: QoS other than best effort fails MODEL_NOT_SUPPORTED. Behaviours: CONN_09. */
    static void check(long timeoutMicros, Qos qos, ConnectFlag flag) {
        if (timeoutMicros <= 0) {
            throw DatException.invalidParameter(4, "the connect timeout must be positive or DAT_TIMEOUT_INFINITE, not "
                    + timeoutMicros);
        }
        if (qos == null || flag == null) {
            throw DatException.invalidParameter(qos == null ? 7 : 8, "null QoS or connect flag");
        }
        if (qos != Qos.BEST_EFFORT) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "QoS " + qos
                    + " is not supported (RC over rdma_cm offers best effort only)");
        }
        if (flag != ConnectFlag.DEFAULT) {
            throw new DatException(DatReturnType.MODEL_NOT_SUPPORTED, "multipath connections are not supported");
        }
    }

    /** The IPv4 address a connect names, or INVALID_ADDRESS. Behaviours: CONN_08. */
    static InetSocketAddress target(SocketAddress remote) {
        if (!(remote instanceof InetSocketAddress isa) || isa.isUnresolved()
                || !(isa.getAddress() instanceof Inet4Address v4)) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.NO_SUBTYPE,
                    remote + " is not a resolved IPv4 address (rdma_cm RDMA_PS_TCP over RoCE/IPoIB)");
        }
        if (v4.isMulticastAddress() || v4.isAnyLocalAddress()
                || (v4.getAddress()[0] == (byte) 255 && v4.getAddress()[3] == (byte) 255)) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.NO_SUBTYPE,
                    v4.getHostAddress() + " cannot be the address of an IA");
        }
        return isa;
    }

    /** The address of {@code dat_ep_common_connect}: its port is the CSP's rdma_cm port. */
    static InetSocketAddress commonTarget(SocketAddress remote) {
        InetSocketAddress target = target(remote);
        if (target.getPort() < 1) {
            throw new DatException(DatReturnType.INVALID_ADDRESS, DatReturnSubtype.NO_SUBTYPE,
                    "a common service point address needs a port");
        }
        return target;
    }

    /** The connection of the EP {@code dat_ep_dup_connect} duplicates, which must be CONNECTED. */
    static EpParam duplicated(EpParam p) {
        if (p.state() != EpState.CONNECTED) {
            throw p.state().invalid("dat_ep_dup_connect (of the EP to duplicate)");
        }
        return p;
    }
}
