package org.jdapl.dat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

/**
 * OFED's DAT extensions in the API: the attribute names, the numbers and names of {@code
 * dat_ib_extensions.h}, the extended completion held by an {@link EventSlot} field by field, the
 * counters, and the defaults that fail MODEL_NOT_SUPPORTED for providers without them.
 */
class ExtensionsApiTest {
    private static <T> T bare(Class<T> type) {
        InvocationHandler h = (proxy, m, args) -> {
            if (m.isDefault()) {
                return InvocationHandler.invokeDefault(proxy, m, args);
            }
            throw new UnsupportedOperationException(m.getName());
        };
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, h));
    }

    @Test
    void attributeNamesAreOfedsAndOffersReadsTheNamedAttributes() {
        assertEquals("DAT_COUNTERS", ProviderAttributes.DAT_COUNTERS);
        assertEquals("DAT_IB_FETCH_AND_ADD", ProviderAttributes.DAT_IB_FETCH_AND_ADD);
        assertEquals("DAT_IB_CMP_AND_SWAP", ProviderAttributes.DAT_IB_CMP_AND_SWAP);
        assertEquals("DAT_IB_IMMED_DATA", ProviderAttributes.DAT_IB_IMMED_DATA);
        assertEquals("DAT_IB_UD", ProviderAttributes.DAT_IB_UD);
        ProviderAttributes pa = new ProviderAttributes("x", 1, 0, 2, 0, true, Set.of(), Set.of(), false, 64, 8,
                true, true, Map.of(ProviderAttributes.DAT_IB_FETCH_AND_ADD, "TRUE",
                ProviderAttributes.DAT_IB_UD, "FALSE"));
        assertTrue(pa.offers(ProviderAttributes.DAT_IB_FETCH_AND_ADD));
        assertFalse(pa.offers(ProviderAttributes.DAT_IB_UD));
        assertFalse(pa.offers(ProviderAttributes.DAT_COUNTERS));
    }

    @Test
    void numbersAndNamesAreThoseOfDatIbExtensionsH() {
        assertEquals(0x40, MemPriv.REMOTE_ATOMIC.value());
        assertEquals(0x40000, EventNumber.IB_DTO.value());
        assertEquals(0x40004, EventNumber.IB_UD_CONNECTION_ERROR.value());
        assertEquals("DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED", EventNumber.IB_UD_CONNECTION_ESTABLISHED.datName());
        assertEquals("DAT_IB_DTO_EVENT", EventNumber.IB_DTO.datName());
        assertTrue(EventNumber.IB_UD_CONNECTION_REQUEST.isExtensionEvent());
        assertFalse(EventNumber.IB_UD_CONNECTION_REQUEST.isConnectionEvent());
        assertFalse(EventNumber.IB_DTO.isAsyncEvent());
        assertFalse(EventNumber.SOFTWARE.isExtensionEvent());
        assertEquals(4, ExtensionType.RECV_IMMED_DATA.value());
        assertEquals(9, ExtensionType.UD_RECV.value());
        assertEquals(11, ExtensionType.UD_CONNECT_ERROR.value());
        assertEquals("DAT_IB_RDMA_WRITE_IMMED_DATA", ExtensionType.RDMA_WRITE_IMMED_DATA.datName());
        assertEquals(26, IaCounter.values().length);
        assertEquals(24, EpCounter.values().length);
        assertEquals(10, EvdCounter.values().length);
        assertEquals("DCNT_EP_RECV_RDMA_IMM_DATA", EpCounter.RECV_RDMA_IMM_DATA.datName());
        assertEquals("DCNT_EVD_DEQUEUE_NOT_FOUND", EvdCounter.DEQUEUE_NOT_FOUND.datName());
        assertEquals("DCNT_IA_SP_CR_ACCEPTED", IaCounter.SP_CR_ACCEPTED.datName());
        assertThrows(IllegalArgumentException.class, () -> new DatEvent.UdConnection(null, EventNumber.IB_DTO, null,
                ExtensionType.UD_REMOTE_AH, null, null, null));
    }

    @Test
    void aSlotHoldsAnExtendedCompletionFieldByFieldAndGivesItBackAsItsRecord() {
        AddressHandle ah = new AddressHandle() {
            @Override
            public SocketAddress address() {
                return new InetSocketAddress("127.0.0.1", 1);
            }

            @Override
            public int qpn() {
                return 5;
            }
        };
        DatEvent.ExtendedDtoCompletion x = new DatEvent.ExtendedDtoCompletion(null, null, 9, DtoStatus.SUCCESS, 12,
                ExtensionType.UD_RECV, 0xcafe, ah);
        EventSlot slot = new EventSlot();
        slot.set(x);
        assertTrue(slot.isExtendedDtoCompletion());
        assertFalse(slot.isDtoCompletion());
        assertEquals(EventNumber.IB_DTO, slot.number());
        assertEquals(ExtensionType.UD_RECV, slot.extensionType());
        assertEquals(0xcafe, slot.immediateData());
        assertSame(ah, slot.remoteAh());
        assertEquals(9, slot.cookie());
        assertEquals(12, slot.transferredLength());
        assertNull(slot.operation());
        assertEquals(x, slot.event());
        slot.setDtoCompletion(null, null, 1, DtoStatus.SUCCESS, 4, DtoOperation.SEND, 0);
        assertNull(slot.extensionType());
        assertEquals(0, slot.immediateData());
        assertNull(slot.remoteAh());
        slot.setExtendedDtoCompletion(null, null, 2, DtoStatus.FLUSHED, 0, ExtensionType.FETCH_AND_ADD, 0, null);
        slot.set(new DatEvent.Software(null, "p"));
        assertNull(slot.extensionType());
        assertFalse(slot.isExtendedDtoCompletion());
    }

    @Test
    void countersReadByEnumAndByOfedNameAndAdd() {
        long[] v = new long[EvdCounter.values().length];
        v[EvdCounter.DEQUEUE_FOUND.ordinal()] = 3;
        Counters<EvdCounter> c = Counters.of(EvdCounter.class, v);
        v[EvdCounter.DEQUEUE_FOUND.ordinal()] = 99;
        assertEquals(3, c.get(EvdCounter.DEQUEUE_FOUND), "of copies its array");
        assertEquals(6, c.plus(c).get(EvdCounter.DEQUEUE_FOUND));
        assertEquals(3L, c.byName().get("DCNT_EVD_DEQUEUE_FOUND"));
        assertEquals("DCNT_EVD_WAIT", c.byName().keySet().iterator().next());
        assertTrue(c.toString().contains("DCNT_EVD_DEQUEUE_FOUND = 3\n"), c.toString());
        assertEquals(Counters.zero(EvdCounter.class), Counters.of(EvdCounter.class, new long[10]));
        assertThrows(IllegalArgumentException.class, () -> Counters.of(EvdCounter.class, new long[3]));
    }

    @Test
    void providersWithoutTheExtensionsFailModelNotSupported() {
        Endpoint ep = bare(Endpoint.class);
        InterfaceAdapter ia = bare(InterfaceAdapter.class);
        EventDispatcher evd = bare(EventDispatcher.class);
        RmrTriplet remote = new RmrTriplet(1, 0, 8);
        LmrTriplet local = new LmrTriplet(bare(LocalMemoryRegion.class), 0, 8);
        List<Runnable> calls = List.of(
                () -> ep.postFetchAndAdd(1, local, 1, remote, Set.of()),
                () -> ep.postCompareAndSwap(0, 1, local, 1, remote, Set.of()),
                () -> ep.postRdmaWriteWithImmediate(List.of(local), 1, remote, 7, Set.of()),
                () -> ep.postRdmaWriteWithImmediate(LocalIov.of(List.of(local)), 1, remote, 7, Set.of()),
                () -> ep.queryCounters(false),
                () -> ia.createDatagramEp(null, null, null, null, null),
                () -> ia.queryCounters(false),
                () -> ia.queryEpCounters(true),
                () -> ia.queryEvdCounters(false),
                () -> evd.queryCounters(false));
        for (Runnable call : calls) {
            DatException e = assertThrows(DatException.class, call::run);
            assertEquals(DatReturnType.MODEL_NOT_SUPPORTED, e.type(), e.getMessage());
        }
    }
}
