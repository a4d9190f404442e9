package org.jdapl.dat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** {@code dat_strerror}: the messages uDAPL prints for a DAT_RETURN. */
class StrerrorTest {
    @Test
    void providerNotFoundReadsAsUdaplPrintsIt() {
        DatReturn.Message m = DatReturn.strerror(0x800a0063);
        assertEquals("DAT_PROVIDER_NOT_FOUND", m.major());
        assertEquals("DAT_NAME_NOT_REGISTERED", m.minor());
        assertEquals("[DAT_PROVIDER_NOT_FOUND:DAT_NAME_NOT_REGISTERED]", m.toString());
    }

    @Test
    void successAndPlainTypes() {
        assertEquals(new DatReturn.Message("DAT_SUCCESS", "DAT_NO_SUBTYPE"), DatReturn.strerror(0));
        assertEquals(new DatReturn.Message("DAT_TIMEOUT_EXPIRED", "DAT_NO_SUBTYPE"), DatReturn.strerror(0x800f0000));
        assertEquals(new DatReturn.Message("DAT_INVALID_HANDLE", "DAT_INVALID_HANDLE_EP"),
                DatReturn.strerror(0x8005000c));
        assertEquals(new DatReturn.Message("DAT_NOT_IMPLEMENTED", "DAT_NO_SUBTYPE"), DatReturn.strerror(0xbfff0000));
    }

    @Test
    void exceptionStrerrorMatchesCode() {
        for (DatReturnType t : DatReturnType.values()) {
            if (t == DatReturnType.SUCCESS) {
                continue;
            }
            DatException e = new DatException(t, DatReturnSubtype.INVALID_ARG2, "x");
            assertEquals(DatReturn.strerror(e.code()), e.strerror());
            assertEquals(t.datName(), e.strerror().major());
        }
    }

    @Test
    void unknownTypeOrSubtypeIsAnInvalidParameter() {
        DatException type = assertThrows(DatException.class, () -> DatReturn.strerror(0x80200000));
        assertEquals(DatReturnType.INVALID_PARAMETER, type.type());
        DatException sub = assertThrows(DatException.class, () -> DatReturn.strerror(0x80050fff));
        assertEquals(DatReturnType.INVALID_PARAMETER, sub.type());
    }
}
