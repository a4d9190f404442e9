package org.jdapl.dat;

/** DAT_CLOSE_FLAGS: how an IA is closed or an EP disconnected. ABRUPT is DAT_CLOSE_DEFAULT. */
public enum CloseFlag implements DatFlag {
    /** DAT_CLOSE_ABRUPT_FLAG: outstanding work is flushed; live objects are freed. */
    ABRUPT(0x00),
    /** DAT_CLOSE_GRACEFUL_FLAG: outstanding request DTOs complete first; an IA with live objects is not closed. */
    GRACEFUL(0x01);

    private final int value;

    CloseFlag(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
