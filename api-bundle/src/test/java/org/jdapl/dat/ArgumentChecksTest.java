package org.jdapl.dat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Argument checks the API makes before any provider is involved. */
class ArgumentChecksTest {
    private static void assertInvalidParameter(Executable call) {
        DatException e = assertThrows(DatException.class, call);
        assertEquals(DatReturnType.INVALID_PARAMETER, e.type());
    }

    @Test
    void lmrTripletBounds() {
        assertInvalidParameter(() -> new LmrTriplet(null, 0, 1));
        assertInvalidParameter(() -> new LmrTriplet(null, -1, 0));
        assertInvalidParameter(() -> new LmrTriplet(null, 0, -1));
        assertInvalidParameter(() -> new LmrTriplet(null, 0, LmrTriplet.MAX_SEGMENT_LENGTH + 1));
        assertEquals(0, new LmrTriplet(null, 0, 0).length());
    }

    @Test
    void rmrTripletBounds() {
        assertInvalidParameter(() -> new RmrTriplet(1, 0, -1));
        assertInvalidParameter(() -> new RmrTriplet(1, 0, 1L << 32));
        assertEquals(0xFFFF_FFFFL, new RmrTriplet(7, 0x1000, 0xFFFF_FFFFL).length());
    }

    @Test
    void epAttributesRange() {
        EpAttributes d = EpAttributes.defaults();
        assertInvalidParameter(() -> d.withQueueDepths(-1, 1));
        assertInvalidParameter(() -> d.withQueueDepths(1, 0));
        assertInvalidParameter(() -> d.withQos(null));
        assertInvalidParameter(() -> new EpAttributes(0, 0, Qos.BEST_EFFORT, Set.of(), Set.of(), 1, 1, 1, 1, 0, 0, 0));
        assertEquals(Qos.LOW_LATENCY, d.withQos(Qos.LOW_LATENCY).qos());
        assertEquals(8, d.withQueueDepths(8, 9).maxRecvDtos());
    }

    @Test
    void srqAttributesRange() {
        assertInvalidParameter(() -> new SrqAttributes(0, 1, 0));
        assertInvalidParameter(() -> new SrqAttributes(4, 0, 0));
        assertInvalidParameter(() -> new SrqAttributes(4, 1, 5));
        assertEquals(4, new SrqAttributes(4, 1, 4).lowWatermark());
    }

    @Test
    void flagMasksConvertBothWays() {
        assertEquals(0x33, DatFlag.bits(Dat.MEM_PRIV_ALL));
        assertEquals(0x1F0, DatFlag.bits(Dat.EVD_DEFAULT_FLAGS));
        assertEquals(EnumSet.of(MemPriv.LOCAL_READ, MemPriv.REMOTE_WRITE), DatFlag.fromBits(MemPriv.class, 0x21));
        assertEquals(EnumSet.of(MemPriv.REMOTE_ATOMIC), DatFlag.fromBits(MemPriv.class, 0x40));
        assertEquals(EnumSet.of(CompletionFlag.SUPPRESS, CompletionFlag.BARRIER_FENCE),
                DatFlag.fromBits(CompletionFlag.class, 0x09));
        assertEquals(Set.of(CloseFlag.GRACEFUL), DatFlag.fromBits(CloseFlag.class, 1));
        assertEquals(Set.of(), DatFlag.fromBits(CloseFlag.class, 0));
        assertEquals(Dat.CLOSE_DEFAULT, CloseFlag.ABRUPT);
    }

    @Test
    void unknownFlagBitsAreInvalidParameters() {
        assertInvalidParameter(() -> DatFlag.fromBits(CloseFlag.class, 0x2));
        assertInvalidParameter(() -> DatFlag.fromBits(MemPriv.class, 0x80));
        assertInvalidParameter(() -> DatFlag.fromBits(EvdFlag.class, 0x2));
    }
}
