package org.jdapl.health;

import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.function.Supplier;
import org.apache.felix.hc.api.FormattingResultLog;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;
import org.jdapl.dat.HandleType;
import org.jdapl.dat.management.IaCountersMXBean;
import org.jdapl.dat.spi.DatProvider;
import org.jdapl.dat.spi.ProviderStatus;

/**
 * The health of one DAT provider, as {@code hc:exec jdapl} shows it: OK with the IAs the provider
 * has open and its other open objects when it can serve IAs; WARN with the provider's own reason
 * ({@link DatProvider#status()}, e.g. no RDMA device) when it cannot open any; CRITICAL if asking
 * it fails. The details name the non-zero counters of each IA the provider has open through the
 * registry ({@link IaCountersMXBean}).
 */
final class ProviderHealthCheck implements HealthCheck {
    private final DatProvider provider;
    private final Supplier<List<IaCountersMXBean>> counters;

    ProviderHealthCheck(DatProvider provider) {
        this(provider, List::of);
    }

    /** A check that also shows the non-zero counters of the provider's open IAs among {@code counters}. */
    ProviderHealthCheck(DatProvider provider, Supplier<List<IaCountersMXBean>> counters) {
        this.provider = provider;
        this.counters = counters;
    }

    @Override
    public Result execute() {
        FormattingResultLog log = new FormattingResultLog();
        ProviderStatus status;
        Map<HandleType, Integer> open;
        try {
            status = provider.status();
            open = provider.openObjects();
        } catch (RuntimeException e) {
            log.critical("provider {} does not answer: {}", provider.name(), e.toString());
            return new Result(log);
        }
        int ias = open.getOrDefault(HandleType.IA, 0);
        if (status.canServe()) {
            log.info("provider {} {}: {} IA{} open{}", provider.name(), provider.version(), ias, ias == 1 ? "" : "s",
                    status.reason().isEmpty() ? "" : "; " + status.reason());
        } else {
            log.warn("provider {} {} cannot open any IA: {}", provider.name(), provider.version(), status.reason());
        }
        log.info("open objects: {}", counts(open));
        for (IaCountersMXBean ia : counters.get()) {
            if (provider.name().equals(ia.getProvider()) && ia.isOpen()) {
                log.info("counters of IA {}: {}", ia.getIaName(), nonZero(ia.getCounters()));
            }
        }
        return new Result(log);
    }

    /** The non-zero counters, e.g. {@code DCNT_EP_POST_SEND=5}, or {@code none}. */
    static String nonZero(Map<String, Long> counters) {
        StringJoiner out = new StringJoiner(", ");
        counters.forEach((name, n) -> {
            if (n != 0) {
                out.add(name + "=" + n);
            }
        });
        return out.length() == 0 ? "none" : out.toString();
    }

    /** The non-zero counts, e.g. {@code IA=2, EP=4}, or {@code none}. */
    static String counts(Map<HandleType, Integer> open) {
        StringJoiner out = new StringJoiner(", ");
        open.forEach((type, n) -> {
            if (n != 0) {
                out.add(type + "=" + n);
            }
        });
        return out.length() == 0 ? "none" : out.toString();
    }
}
