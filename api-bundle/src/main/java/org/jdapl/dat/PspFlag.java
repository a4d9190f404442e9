package org.jdapl.dat;

/** DAT_PSP_FLAGS: who creates the endpoint of a connection request arriving at a PSP. */
public enum PspFlag implements DatFlag {
    /** DAT_PSP_CONSUMER_FLAG: the consumer supplies an endpoint at accept. */
    CONSUMER(0x00),
    /** DAT_PSP_PROVIDER_FLAG: the provider creates an endpoint in TENTATIVE_CONNECTION_PENDING. */
    PROVIDER(0x01);

    private final int value;

    PspFlag(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
