package org.jdapl.registry;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jdapl.dat.DatException;
import org.jdapl.dat.InterfaceAdapter;
import org.jdapl.dat.ProviderAttributes;
import org.jdapl.dat.management.IaCountersMXBean;

/**
 * The counters of one IA opened through the registry, as an MXBean: read from the IA on every call
 * (nothing is cached), empty once the IA is closed or if its provider does not count.
 */
final class IaCounters implements IaCountersMXBean {
    private final InterfaceAdapter ia;
    private final String iaName;
    private final String provider;

    IaCounters(InterfaceAdapter ia, String iaName, String provider) {
        this.ia = ia;
        this.iaName = iaName;
        this.provider = provider;
    }

    InterfaceAdapter ia() {
        return ia;
    }

    @Override
    public String getIaName() {
        return iaName;
    }

    @Override
    public String getProvider() {
        return provider;
    }

    @Override
    public boolean isOpen() {
        try {
            return !ia.isFreed();
        } catch (RuntimeException e) {
            return false;
        }
    }

    @Override
    public boolean isCounting() {
        try {
            return isOpen() && ia.query().provider().offers(ProviderAttributes.DAT_COUNTERS);
        } catch (DatException e) {
            return false;
        }
    }

    @Override
    public Map<String, Long> getCounters() {
        return read(false);
    }

    @Override
    public void reset() {
        read(true);
    }

    /** The counters by OFED name (IA, then EP and EVD totals); zeroed after if {@code reset}. */
    private Map<String, Long> read(boolean reset) {
        Map<String, Long> all = new LinkedHashMap<>();
        if (!isCounting()) {
            return all;
        }
        try {
            all.putAll(ia.queryCounters(reset).byName());
            all.putAll(ia.queryEpCounters(reset).byName());
            all.putAll(ia.queryEvdCounters(reset).byName());
        } catch (DatException e) {
            // The IA closed meanwhile (INVALID_HANDLE) or does not count: what was read stands.
        }
        return all;
    }
}
