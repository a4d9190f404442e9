package org.jdapl.dat;

/** DAT_EVD_FLAGS: the event streams an EVD accepts. */
public enum EvdFlag implements DatFlag {
    /** DAT_EVD_SOFTWARE_FLAG: software events posted by the consumer. */
    SOFTWARE(0x001),
    /** DAT_EVD_CR_FLAG: connection requests of service points. */
    CR(0x010),
    /** DAT_EVD_DTO_FLAG: DTO completions. */
    DTO(0x020),
    /** DAT_EVD_CONNECTION_FLAG: connection events of endpoints. */
    CONNECTION(0x040),
    /** DAT_EVD_RMR_BIND_FLAG: RMR bind completions. */
    RMR_BIND(0x080),
    /** DAT_EVD_ASYNC_FLAG: asynchronous errors of the IA. */
    ASYNC(0x100);

    private final int value;

    EvdFlag(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
