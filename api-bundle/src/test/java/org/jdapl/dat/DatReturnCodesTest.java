package org.jdapl.dat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The numeric DAT_RETURN values against those of uDAPL's dat_error.h (DAT 2.0). */
class DatReturnCodesTest {
    /** DAT_RETURN_TYPE values of dat_error.h, bits 29-16. */
    private static final Map<String, Integer> TYPES = Map.ofEntries(
            Map.entry("DAT_SUCCESS", 0x00000000),
            Map.entry("DAT_ABORT", 0x00010000),
            Map.entry("DAT_CONN_QUAL_IN_USE", 0x00020000),
            Map.entry("DAT_INSUFFICIENT_RESOURCES", 0x00030000),
            Map.entry("DAT_INTERNAL_ERROR", 0x00040000),
            Map.entry("DAT_INVALID_HANDLE", 0x00050000),
            Map.entry("DAT_INVALID_PARAMETER", 0x00060000),
            Map.entry("DAT_INVALID_STATE", 0x00070000),
            Map.entry("DAT_LENGTH_ERROR", 0x00080000),
            Map.entry("DAT_MODEL_NOT_SUPPORTED", 0x00090000),
            Map.entry("DAT_PROVIDER_NOT_FOUND", 0x000A0000),
            Map.entry("DAT_PRIVILEGES_VIOLATION", 0x000B0000),
            Map.entry("DAT_PROTECTION_VIOLATION", 0x000C0000),
            Map.entry("DAT_QUEUE_EMPTY", 0x000D0000),
            Map.entry("DAT_QUEUE_FULL", 0x000E0000),
            Map.entry("DAT_TIMEOUT_EXPIRED", 0x000F0000),
            Map.entry("DAT_PROVIDER_ALREADY_REGISTERED", 0x00100000),
            Map.entry("DAT_PROVIDER_IN_USE", 0x00110000),
            Map.entry("DAT_INVALID_ADDRESS", 0x00120000),
            Map.entry("DAT_INTERRUPTED_CALL", 0x00130000),
            Map.entry("DAT_CONN_QUAL_UNAVAILABLE", 0x00140000),
            Map.entry("DAT_RESERVED_LMR", 0x00150000),
            Map.entry("DAT_PORT_IN_USE", 0x00160000),
            Map.entry("DAT_COMM_NOT_SUPPORTED", 0x00170000),
            Map.entry("DAT_NOT_IMPLEMENTED", 0x3FFF0000));

    /** DAT_RETURN_SUBTYPE values of dat_error.h, bits 15-0 (the enumeration's positions). */
    private static final Map<String, Integer> SUBTYPES = Map.ofEntries(
            Map.entry("DAT_NO_SUBTYPE", 0x00),
            Map.entry("DAT_SUB_INTERRUPTED", 0x01),
            Map.entry("DAT_RESOURCE_MEMORY", 0x02),
            Map.entry("DAT_RESOURCE_DEVICE", 0x03),
            Map.entry("DAT_RESOURCE_TEP", 0x04),
            Map.entry("DAT_RESOURCE_TEVD", 0x05),
            Map.entry("DAT_RESOURCE_PROTECTION_DOMAIN", 0x06),
            Map.entry("DAT_RESOURCE_MEMORY_REGION", 0x07),
            Map.entry("DAT_RESOURCE_ERROR_HANDLER", 0x08),
            Map.entry("DAT_RESOURCE_CREDITS", 0x09),
            Map.entry("DAT_RESOURCE_SRQ", 0x0a),
            Map.entry("DAT_INVALID_HANDLE_IA", 0x0b),
            Map.entry("DAT_INVALID_HANDLE_EP", 0x0c),
            Map.entry("DAT_INVALID_HANDLE_LMR", 0x0d),
            Map.entry("DAT_INVALID_HANDLE_RMR", 0x0e),
            Map.entry("DAT_INVALID_HANDLE_PZ", 0x0f),
            Map.entry("DAT_INVALID_HANDLE_PSP", 0x10),
            Map.entry("DAT_INVALID_HANDLE_RSP", 0x11),
            Map.entry("DAT_INVALID_HANDLE_CR", 0x12),
            Map.entry("DAT_INVALID_HANDLE_CNO", 0x13),
            Map.entry("DAT_INVALID_HANDLE_EVD_CR", 0x14),
            Map.entry("DAT_INVALID_HANDLE_EVD_REQUEST", 0x15),
            Map.entry("DAT_INVALID_HANDLE_EVD_RECV", 0x16),
            Map.entry("DAT_INVALID_HANDLE_EVD_CONN", 0x17),
            Map.entry("DAT_INVALID_HANDLE_EVD_ASYNC", 0x18),
            Map.entry("DAT_INVALID_HANDLE_SRQ", 0x19),
            Map.entry("DAT_INVALID_HANDLE_CSP", 0x1a),
            Map.entry("DAT_INVALID_HANDLE1", 0x1b),
            Map.entry("DAT_INVALID_HANDLE2", 0x1c),
            Map.entry("DAT_INVALID_HANDLE3", 0x1d),
            Map.entry("DAT_INVALID_HANDLE4", 0x1e),
            Map.entry("DAT_INVALID_HANDLE5", 0x1f),
            Map.entry("DAT_INVALID_HANDLE6", 0x20),
            Map.entry("DAT_INVALID_HANDLE7", 0x21),
            Map.entry("DAT_INVALID_HANDLE8", 0x22),
            Map.entry("DAT_INVALID_HANDLE9", 0x23),
            Map.entry("DAT_INVALID_HANDLE10", 0x24),
            Map.entry("DAT_INVALID_ARG1", 0x25),
            Map.entry("DAT_INVALID_ARG2", 0x26),
            Map.entry("DAT_INVALID_ARG3", 0x27),
            Map.entry("DAT_INVALID_ARG4", 0x28),
            Map.entry("DAT_INVALID_ARG5", 0x29),
            Map.entry("DAT_INVALID_ARG6", 0x2a),
            Map.entry("DAT_INVALID_ARG7", 0x2b),
            Map.entry("DAT_INVALID_ARG8", 0x2c),
            Map.entry("DAT_INVALID_ARG9", 0x2d),
            Map.entry("DAT_INVALID_ARG10", 0x2e),
            Map.entry("DAT_INVALID_STATE_EP_UNCONNECTED", 0x2f),
            Map.entry("DAT_INVALID_STATE_EP_ACTCONNPENDING", 0x30),
            Map.entry("DAT_INVALID_STATE_EP_PASSCONNPENDING", 0x31),
            Map.entry("DAT_INVALID_STATE_EP_TENTCONNPENDING", 0x32),
            Map.entry("DAT_INVALID_STATE_EP_CONNECTED", 0x33),
            Map.entry("DAT_INVALID_STATE_EP_DISCONNECTED", 0x34),
            Map.entry("DAT_INVALID_STATE_EP_RESERVED", 0x35),
            Map.entry("DAT_INVALID_STATE_EP_COMPLPENDING", 0x36),
            Map.entry("DAT_INVALID_STATE_EP_DISCPENDING", 0x37),
            Map.entry("DAT_INVALID_STATE_EP_PROVIDERCONTROL", 0x38),
            Map.entry("DAT_INVALID_STATE_EP_NOTREADY", 0x39),
            Map.entry("DAT_INVALID_STATE_EP_RECV_WATERMARK", 0x3a),
            Map.entry("DAT_INVALID_STATE_EP_PZ", 0x3b),
            Map.entry("DAT_INVALID_STATE_EP_EVD_REQUEST", 0x3c),
            Map.entry("DAT_INVALID_STATE_EP_EVD_RECV", 0x3d),
            Map.entry("DAT_INVALID_STATE_EP_EVD_CONNECT", 0x3e),
            Map.entry("DAT_INVALID_STATE_EP_UNCONFIGURED", 0x3f),
            Map.entry("DAT_INVALID_STATE_EP_UNCONFRESERVED", 0x40),
            Map.entry("DAT_INVALID_STATE_EP_UNCONFPASSIVE", 0x41),
            Map.entry("DAT_INVALID_STATE_EP_UNCONFTENTATIVE", 0x42),
            Map.entry("DAT_INVALID_STATE_CNO_IN_USE", 0x43),
            Map.entry("DAT_INVALID_STATE_CNO_DEAD", 0x44),
            Map.entry("DAT_INVALID_STATE_EVD_OPEN", 0x45),
            Map.entry("DAT_INVALID_STATE_EVD_ENABLED", 0x46),
            Map.entry("DAT_INVALID_STATE_EVD_DISABLED", 0x47),
            Map.entry("DAT_INVALID_STATE_EVD_WAITABLE", 0x48),
            Map.entry("DAT_INVALID_STATE_EVD_UNWAITABLE", 0x49),
            Map.entry("DAT_INVALID_STATE_EVD_IN_USE", 0x4a),
            Map.entry("DAT_INVALID_STATE_EVD_CONFIG_NOTIFY", 0x4b),
            Map.entry("DAT_INVALID_STATE_EVD_CONFIG_SOLICITED", 0x4c),
            Map.entry("DAT_INVALID_STATE_EVD_CONFIG_THRESHOLD", 0x4d),
            Map.entry("DAT_INVALID_STATE_EVD_WAITER", 0x4e),
            Map.entry("DAT_INVALID_STATE_EVD_ASYNC", 0x4f),
            Map.entry("DAT_INVALID_STATE_IA_IN_USE", 0x50),
            Map.entry("DAT_INVALID_STATE_LMR_IN_USE", 0x51),
            Map.entry("DAT_INVALID_STATE_LMR_FREE", 0x52),
            Map.entry("DAT_INVALID_STATE_PZ_IN_USE", 0x53),
            Map.entry("DAT_INVALID_STATE_PZ_FREE", 0x54),
            Map.entry("DAT_INVALID_STATE_SRQ_OPERATIONAL", 0x55),
            Map.entry("DAT_INVALID_STATE_SRQ_ERROR", 0x56),
            Map.entry("DAT_INVALID_STATE_SRQ_IN_USE", 0x57),
            Map.entry("DAT_PRIVILEGES_READ", 0x58),
            Map.entry("DAT_PRIVILEGES_WRITE", 0x59),
            Map.entry("DAT_PRIVILEGES_RDMA_READ", 0x5a),
            Map.entry("DAT_PRIVILEGES_RDMA_WRITE", 0x5b),
            Map.entry("DAT_PROTECTION_READ", 0x5c),
            Map.entry("DAT_PROTECTION_WRITE", 0x5d),
            Map.entry("DAT_PROTECTION_RDMA_READ", 0x5e),
            Map.entry("DAT_PROTECTION_RDMA_WRITE", 0x5f),
            Map.entry("DAT_INVALID_ADDRESS_UNSUPPORTED", 0x60),
            Map.entry("DAT_INVALID_ADDRESS_UNREACHABLE", 0x61),
            Map.entry("DAT_INVALID_ADDRESS_MALFORMED", 0x62),
            Map.entry("DAT_NAME_NOT_REGISTERED", 0x63),
            Map.entry("DAT_MAJOR_NOT_FOUND", 0x64),
            Map.entry("DAT_MINOR_NOT_FOUND", 0x65),
            Map.entry("DAT_THREAD_SAFETY_NOT_FOUND", 0x66));

    @Test
    void everyTypeHasTheValueOfDatErrorH() {
        assertEquals(TYPES.keySet(), Arrays.stream(DatReturnType.values()).map(DatReturnType::datName)
                .collect(Collectors.toSet()));
        for (DatReturnType t : DatReturnType.values()) {
            assertEquals((int) TYPES.get(t.datName()), t.value() << 16, t.datName());
        }
    }

    @Test
    void everySubtypeHasTheValueOfDatErrorH() {
        assertEquals(SUBTYPES.keySet(), Arrays.stream(DatReturnSubtype.values()).map(DatReturnSubtype::datName)
                .collect(Collectors.toSet()));
        for (DatReturnSubtype s : DatReturnSubtype.values()) {
            assertEquals((int) SUBTYPES.get(s.datName()), s.value(), s.datName());
        }
    }

    @Test
    void errorCodesCarryTheClassBitTypeAndSubtype() {
        assertEquals(0x8005000c, DatReturn.code(DatReturnType.INVALID_HANDLE, DatReturnSubtype.INVALID_HANDLE_EP));
        assertEquals(0x800a0063,
                DatReturn.code(DatReturnType.PROVIDER_NOT_FOUND, DatReturnSubtype.NAME_NOT_REGISTERED));
        assertEquals(0x800f0000, DatReturn.code(DatReturnType.TIMEOUT_EXPIRED, DatReturnSubtype.NO_SUBTYPE));
        assertEquals(0, DatReturn.code(DatReturnType.SUCCESS, DatReturnSubtype.NO_SUBTYPE));
        for (DatReturnType t : DatReturnType.values()) {
            for (DatReturnSubtype s : DatReturnSubtype.values()) {
                int code = DatReturn.code(t, s);
                int expected = t == DatReturnType.SUCCESS ? s.value() : TYPES.get(t.datName()) | 0x80000000 | s.value();
                assertEquals(expected, code);
                assertEquals(t, DatReturnType.ofCode(code));
                assertEquals(s, DatReturnSubtype.ofCode(code));
                assertEquals(t != DatReturnType.SUCCESS, DatReturn.isError(code));
                assertFalse(DatReturn.isWarning(code));
            }
        }
    }

    @Test
    void exceptionReportsItsCode() {
        DatException e = new DatException(DatReturnType.INVALID_STATE, DatReturnSubtype.INVALID_STATE_EP_CONNECTED,
                "connect");
        assertEquals(0x80070033, e.code());
        assertEquals(DatReturnType.INVALID_STATE, e.type());
        assertEquals(DatReturnSubtype.INVALID_STATE_EP_CONNECTED, e.subtype());
        assertEquals("[DAT_INVALID_STATE:DAT_INVALID_STATE_EP_CONNECTED] (0x80070033): connect", e.getMessage());
        assertEquals(DatReturnSubtype.NO_SUBTYPE, new DatException(DatReturnType.ABORT, "x").subtype());
        assertThrows(IllegalArgumentException.class,
                () -> new DatException(DatReturnType.SUCCESS, DatReturnSubtype.NO_SUBTYPE, "not an error"));
        assertEquals(DatReturnSubtype.INVALID_ARG3, DatException.invalidParameter(3, "x").subtype());
        assertEquals(DatReturnSubtype.NO_SUBTYPE, DatException.invalidParameter(11, "x").subtype());
        assertTrue(DatException.invalidHandle(DatReturnSubtype.INVALID_HANDLE_LMR, "x").getMessage()
                .startsWith("[DAT_INVALID_HANDLE:DAT_INVALID_HANDLE_LMR]"));
    }

    @Test
    void epStatesNameTheirInvalidStateSubtype() {
        assertEquals(DatReturnSubtype.INVALID_STATE_EP_DISCPENDING, EpState.DISCONNECT_PENDING.invalidStateSubtype());
        assertEquals(DatReturnSubtype.INVALID_STATE_EP_UNCONNECTED, EpState.UNCONNECTED.invalidStateSubtype());
        assertEquals(DatReturnSubtype.INVALID_STATE_EP_PASSCONNPENDING,
                EpState.PASSIVE_CONNECTION_PENDING.invalidStateSubtype());
        DatException e = EpState.CONNECTED.invalid("dat_ep_connect");
        assertEquals(DatReturnType.INVALID_STATE, e.type());
        assertEquals(DatReturnSubtype.INVALID_STATE_EP_CONNECTED, e.subtype());
        assertEquals(11, EpState.DISCONNECTED.value());
        assertEquals(9, EpState.CONNECTED.value());
    }

    @Test
    void handleTypesNameTheirInvalidHandleSubtype() {
        assertEquals(0x8005000c, HandleType.EP.invalid("freed").code());
        assertEquals(0x8005000b, HandleType.IA.invalid("closed").code());
        assertEquals(0x8005001a, HandleType.CSP.invalid("freed").code());
        assertEquals(0x80050019, HandleType.SRQ.invalid("freed").code());
    }
}
