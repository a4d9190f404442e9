package org.jdapl.provider.ofi.kit;

import java.util.Map;
import org.jdapl.conformance.ConformanceFixture;

/**
 * The kit on libfabric's {@code tcp;ofi_rxm} (reliable datagrams over tcp connections on {@code lo})
 * with the peer IA in a second JVM: {@code target/conformance/ofi-tcp-rxm.txt}.
 */
class OfiTcpRxmConformanceTest extends OfiShmConformanceTest {
    @Override
    ConformanceFixture openFixture() {
        return OfiTwoJvmFixture.rdm("tcp-rxm", "tcp;ofi_rxm lo");
    }

    @Override
    Map<String, String> openIds() {
        return OPEN_RXM;
    }

    static final Map<String, String> OPEN_RXM = Map.of(
            "DISC_03", "rxm completes an eager send at transmission although the endpoint asks FI_DELIVERY_COMPLETE,"
                    + " so a send to a peer without a receive completes SUCCESS",
            "OBJ_07", "as DISC_03: a send completed SUCCESS while no receive was posted",
            "LMR_05", "tcp's target ends the connection on a refused RMA without a status and rxm flushes the"
                    + " request: FLUSHED, not REMOTE_ACCESS",
            "LMR_06", "as LMR_05");
}
