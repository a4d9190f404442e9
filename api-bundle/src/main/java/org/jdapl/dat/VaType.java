package org.jdapl.dat;

/** DAT_VA_TYPE: how RMR target addresses of a region are formed. */
public enum VaType implements DatFlag {
    /** DAT_VA_TYPE_VA: target addresses are the region's registered virtual addresses. */
    VA(0x0),
    /** DAT_VA_TYPE_ZB: target addresses are zero-based offsets into the region. */
    ZB(0x1);

    private final int value;

    VaType(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
