package org.jdapl.dat.management;

import java.util.Map;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The counters of one open IA as operators see them (JMX, {@code dat:counters}, the health check):
 * OFED's DCNT_IA_* counters of the IA, and the DCNT_EP_* and DCNT_EVD_* totals of every EP and EVD
 * it has had since it opened or was last reset ({@link org.jdapl.dat.InterfaceAdapter#queryCounters},
 * {@code queryEpCounters}, {@code queryEvdCounters}).
 */
@ProviderType
public interface IaCountersMXBean {
    /** The IA's name. */
    String getIaName();

    /** The name of the provider that opened it. */
    String getProvider();

    /** Whether the IA is still open (a closed IA's counters are empty). */
    boolean isOpen();

    /** Whether the provider counts (offers DAT_COUNTERS). */
    boolean isCounting();

    /** Every counter by its OFED name, IA counters first, then the EP and EVD totals; empty if none. */
    Map<String, Long> getCounters();

    /** Zeroes the IA's counters and its EP and EVD totals. */
    void reset();
}
