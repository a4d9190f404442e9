package org.jdapl.provider.ofa;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import org.jdapl.dat.DatException;
import org.jdapl.dat.DatReturnType;
import org.jdapl.provider.ofa.rdmacm.RdmaCm;
import org.junit.jupiter.api.Test;

/** The two private data conventions and OFED's qualifier-to-port map, without a device. */
class PrivateDataTest {
    private static final byte[] DATA = {1, 2, 3};

    @Test
    void ofaV2NamesSpeakOfedsWireAndOthersJdaplsOwn() {
        assertSame(PrivateData.OFED, PrivateData.of("ofa-v2-mlx5_0-1"));
        assertSame(PrivateData.OFED, PrivateData.of("ofa-v2-ib0"));
        assertSame(PrivateData.JDAPL, PrivateData.of("jdapl-rxe0-1"));
        assertSame(PrivateData.JDAPL, PrivateData.of("OpenIB-cma"));
    }

    @Test
    void CONN_10_ofedConnectAndAcceptGoAsGivenAndArriveAsTheWholeBuffer() {
        assertArrayEquals(DATA, PrivateData.OFED.connect(DATA));
        byte[] buffer = Arrays.copyOf(DATA, PrivateData.TRANSPORT_MAX);
        assertArrayEquals(buffer, PrivateData.OFED.received(buffer));
        assertEquals(56, PrivateData.OFED.max);
        PrivateData.OFED.check(new byte[56], 5);
        DatException e = assertThrows(DatException.class, () -> PrivateData.OFED.check(new byte[57], 5));
        assertEquals(DatReturnType.INVALID_PARAMETER, e.type());
    }

    @Test
    void CONN_13_ofedRejectCarriesDaplPdataHdrAndOnlyAHeaderedConsumerRejectIsThePeers() {
        byte[] wire = PrivateData.OFED.consumerReject(DATA);
        assertArrayEquals(new byte[] {2, 0, 2, 0, 1, 2, 3}, wire); // DAT 2.0, provider 2.0, network order
        byte[] rej = Arrays.copyOf(wire, 148); // rdma_cm hands over the whole REJ buffer
        byte[] peer = PrivateData.OFED.peerRejected(RdmaCm.REJECT_CONSUMER_DEFINED, rej);
        assertEquals(144, peer.length);
        assertArrayEquals(DATA, Arrays.copyOf(peer, 3));
        assertNull(PrivateData.OFED.peerRejected(RdmaCm.REJECT_CONSUMER_DEFINED, new byte[148]), "no header");
        assertNull(PrivateData.OFED.peerRejected(RdmaCm.REJECT_CONSUMER_DEFINED, new byte[0]), "no data");
        assertNull(PrivateData.OFED.peerRejected(8, rej), "not a consumer-defined reason");
        assertArrayEquals(new byte[0], PrivateData.OFED.providerReject());
    }

    @Test
    void CONN_13_jdaplKeepsExactLengthsAndTellsProviderRejects() {
        byte[] wire = PrivateData.JDAPL.connect(DATA);
        assertArrayEquals(new byte[] {3, 1, 2, 3}, wire);
        assertArrayEquals(DATA, PrivateData.JDAPL.received(Arrays.copyOf(wire, 56)));
        assertArrayEquals(DATA, PrivateData.JDAPL.peerRejected(RdmaCm.REJECT_CONSUMER_DEFINED,
                Arrays.copyOf(PrivateData.JDAPL.consumerReject(DATA), 148)));
        assertNull(PrivateData.JDAPL.peerRejected(RdmaCm.REJECT_CONSUMER_DEFINED,
                Arrays.copyOf(PrivateData.JDAPL.providerReject(), 148)));
        assertEquals(55, PrivateData.JDAPL.max);
    }

    @Test
    void qualifiersMapToPortsAsOfedsSidToPort() {
        assertEquals(0, PrivateData.port(0));
        assertEquals(1, PrivateData.port(1));
        assertEquals(45248, PrivateData.port(45248));
        assertEquals(0xffff, PrivateData.port(0xffff));
        assertEquals(0x10000 % 32001 + 33534, PrivateData.port(0x10000));
        assertEquals(33534, PrivateData.port(32001L * 5));
        assertEquals(Long.remainderUnsigned(-1L, 32001) + 33534, PrivateData.port(-1L));
    }
}
