package org.jdapl.provider.ofa.device;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.spi.IaSpec;
import org.jdapl.provider.ofa.OfaProvider;
import org.jdapl.provider.ofa.verbs.Verbs;

/**
 * The RDMA device the device tests run on. Where there is none the tests are skipped with
 * "no RDMA device"; in the Soft-RoCE guest (JDAPL_RXE_DEVICE set) a missing device is a failure.
 */
final class RxeDevice {
    static final String EXPECTED = System.getenv("JDAPL_RXE_DEVICE");
    static final String ADDRESS = System.getenv().getOrDefault("JDAPL_RXE_ADDRESS", "192.168.77.1");
    static final String NETDEV = System.getenv().getOrDefault("JDAPL_RXE_NETDEV", "veth0");

    private RxeDevice() {
    }

    /** The first device's name; skips the test without one. */
    static String require() {
        List<String> devices = Verbs.unavailableReason() == null ? Verbs.get().deviceNames() : List.of();
        if (EXPECTED != null) {
            assertFalse(devices.isEmpty(), "JDAPL_RXE_DEVICE=" + EXPECTED + " but no RDMA device is present");
        }
        assumeTrue(!devices.isEmpty(), "no RDMA device");
        return EXPECTED != null && devices.contains(EXPECTED) ? EXPECTED : devices.get(0);
    }

    /** Opens IA {@code ofa-v2-<device>-1} with ia_params {@code "<device> 1"}. */
    static InterfaceAdapter open(OfaProvider provider) {
        String dev = require();
        return provider.open(new IaSpec("ofa-v2-" + dev + "-1", dev + " 1", "", true, "test"), 16);
    }
}
