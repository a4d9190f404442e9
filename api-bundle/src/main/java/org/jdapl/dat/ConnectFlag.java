package org.jdapl.dat;

/** DAT_CONNECT_FLAGS: connection establishment flags. DEFAULT is DAT_CONNECT_DEFAULT_FLAG. */
public enum ConnectFlag implements DatFlag {
    /** DAT_CONNECT_DEFAULT_FLAG: no multipathing. */
    DEFAULT(0x00),
    /** DAT_CONNECT_MULTIPATH_REQUESTED_FLAG: multipathing is requested. */
    MULTIPATH_REQUESTED(0x01),
    /** DAT_CONNECT_MULTIPATH_REQUIRED_FLAG: multipathing is required. */
    MULTIPATH_REQUIRED(0x02);

    private final int value;

    ConnectFlag(int value) {
        this.value = value;
    }

    @Override
    public int value() {
        return value;
    }
}
