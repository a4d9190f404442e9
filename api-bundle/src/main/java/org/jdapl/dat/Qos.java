package org.jdapl.dat;

/** DAT_QOS: the quality of service a connection requests. */
public enum Qos implements DatFlag {
    /** DAT_QOS_BEST_EFFORT: no particular service. */
    BEST_EFFORT(0x00),
    /** DAT_QOS_HIGH_THROUGHPUT: high throughput. */
    HIGH_THROUGHPUT(0x01),
    /** DAT_QOS_LOW_LATENCY: low latency. */
    LOW_LATENCY(0x02),
    /** DAT_QOS_ECONOMY: neither low latency nor high throughput. */
    ECONOMY(0x04),
    /** DAT_QOS_PREMIUM: both low latency and high throughput. */
    PREMIUM(0x08);

    private final int value;

    Qos(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
