package org.jdapl.dat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The sealed DatEvent records and the DAT_EVENT_NUMBER values. */
class EventRecordsTest {
    @Test
    void eventNumbersHaveTheValuesOfDatH() {
        assertEquals(0x00001, EventNumber.DTO_COMPLETION.value());
        assertEquals(0x01001, EventNumber.RMR_BIND_COMPLETION.value());
        assertEquals(0x02001, EventNumber.CONNECTION_REQUEST.value());
        assertEquals(0x04001, EventNumber.CONNECTION_ESTABLISHED.value());
        assertEquals(0x04005, EventNumber.CONNECTION_DISCONNECTED.value());
        assertEquals(0x04008, EventNumber.CONNECTION_UNREACHABLE.value());
        assertEquals(0x08001, EventNumber.ASYNC_ERROR_EVD_OVERFLOW.value());
        assertEquals(0x08005, EventNumber.ASYNC_ERROR_PROVIDER_INTERNAL_ERROR.value());
        assertEquals(0x10001, EventNumber.SOFTWARE.value());
        assertEquals(0x08006, EventNumber.ASYNC_SRQ_LOW_WATERMARK.value());
        assertEquals(0x08007, EventNumber.ASYNC_SRQ_SOFT_HIGH_WATERMARK.value());
        assertEquals("DAT_SRQ_LOW_WATERMARK_EVENT", EventNumber.ASYNC_SRQ_LOW_WATERMARK.datName());
        assertEquals("DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT", EventNumber.ASYNC_SRQ_SOFT_HIGH_WATERMARK.datName());
        assertEquals(2, Dat.SRQ_LOW_WATERMARK_EVENT);
        assertEquals(2, Dat.SRQ_SOFT_HIGH_WATERMARK_EVENT);
        assertEquals("DAT_CONNECTION_EVENT_TIMED_OUT", EventNumber.CONNECTION_TIMED_OUT.datName());
        assertEquals("DAT_ASYNC_ERROR_EP_BROKEN", EventNumber.ASYNC_ERROR_EP_BROKEN.datName());
        assertEquals("DAT_DTO_COMPLETION_EVENT", EventNumber.DTO_COMPLETION.datName());
    }

    @Test
    void connectionAndAsyncClassification() {
        for (EventNumber n : EventNumber.values()) {
            boolean conn = n.name().startsWith("CONNECTION_") && n != EventNumber.CONNECTION_REQUEST;
            assertEquals(conn, n.isConnectionEvent(), n.name());
            boolean async = n.name().startsWith("ASYNC_") || n.name().startsWith("HA_");
            assertEquals(async, n.isAsyncEvent(), n.name());
        }
    }

    @Test
    void connectionEventRejectsOtherNumbersAndDefaultsPrivateData() {
        assertThrows(IllegalArgumentException.class,
                () -> new DatEvent.Connection(null, EventNumber.DTO_COMPLETION, null, null));
        DatEvent.Connection c = new DatEvent.Connection(null, EventNumber.CONNECTION_PEER_REJECTED, null, null);
        assertArrayEquals(new byte[0], c.privateData());
        assertEquals(EventNumber.CONNECTION_PEER_REJECTED, c.number());
    }

    @Test
    void asyncErrorRejectsOtherNumbers() {
        assertThrows(IllegalArgumentException.class,
                () -> new DatEvent.AsyncError(null, EventNumber.CONNECTION_BROKEN, null, 0, "x"));
        assertEquals(EventNumber.ASYNC_ERROR_IA_CATASTROPHIC,
                new DatEvent.AsyncError(null, EventNumber.ASYNC_ERROR_IA_CATASTROPHIC, null, 0, "x").number());
    }

    @Test
    void fixedNumberRecords() {
        DatEvent dto = new DatEvent.DtoCompletion(null, null, 42, DtoStatus.FLUSHED, 0, DtoOperation.SEND, 0);
        assertEquals(EventNumber.DTO_COMPLETION, dto.number());
        assertEquals(EventNumber.SOFTWARE, new DatEvent.Software(null, "p").number());
        assertEquals(EventNumber.RMR_BIND_COMPLETION,
                new DatEvent.RmrBindCompletion(null, null, 1, DtoStatus.SUCCESS).number());
        assertEquals(EventNumber.CONNECTION_REQUEST,
                new DatEvent.ConnectionRequest(null, null, null, 7, null, false).number());
        String described = switch (dto) {
            case DatEvent.DtoCompletion d -> "dto " + d.cookie() + " " + d.status();
            case DatEvent.RmrBindCompletion r -> "bind";
            case DatEvent.ConnectionRequest r -> "cr";
            case DatEvent.Connection c -> "conn";
            case DatEvent.AsyncError a -> "async";
            case DatEvent.Software s -> "se";
            case DatEvent.ExtendedDtoCompletion x -> "ext";
            case DatEvent.UdConnection u -> "ud";
        };
        assertEquals("dto 42 FLUSHED", described);
    }

    @Test
    void dtoStatusValuesMatchDatH() {
        assertEquals(0, DtoStatus.SUCCESS.value());
        assertEquals(1, DtoStatus.FLUSHED.value());
        assertEquals(4, DtoStatus.LOCAL_PROTECTION.value());
        assertEquals(6, DtoStatus.REMOTE_ACCESS.value());
        assertEquals(9, DtoStatus.RECEIVER_NOT_READY.value());
        assertEquals(11, DtoStatus.RMR_OPERATION_FAILED.value());
        assertEquals(3, DtoOperation.RECEIVE.value());
        assertTrue(EventNumber.CONNECTION_BROKEN.isConnectionEvent());
        assertFalse(EventNumber.SOFTWARE.isConnectionEvent());
    }
}
