package org.jdapl.provider.ofi;

import java.util.EnumMap;
import java.util.Map;
import org.jdapl.dat.HandleType;

/** How many objects of each kind are open across the provider's IAs. */
final class ObjectCounts {
    private final EnumMap<HandleType, Integer> counts = new EnumMap<>(HandleType.class);

    synchronized void opened(HandleType type) {
        counts.merge(type, 1, Integer::sum);
    }

    synchronized void closed(HandleType type) {
        counts.merge(type, -1, Integer::sum);
    }

    synchronized Map<HandleType, Integer> snapshot() {
        EnumMap<HandleType, Integer> m = new EnumMap<>(HandleType.class);
        counts.forEach((k, v) -> {
            if (v != 0) {
                m.put(k, v);
            }
        });
        return m;
    }
}
