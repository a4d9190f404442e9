package org.jdapl.registry;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.jdapl.dat.management.IaCountersMXBean;

/**
 * Formats the counters of open IAs for people ({@code dat:counters}): one row per counter, with the
 * IA, its provider, OFED's counter name and the value; aligned columns, or tab-separated.
 */
final class CounterTable {
    private static final String[] HEADERS = {"IA NAME", "PROVIDER", "COUNTER", "VALUE"};

    private CounterTable() {
    }

    /**
     * The counters of {@code ias} whose name is in {@code names} (all if empty), read (and zeroed
     * if {@code reset}) now.
     */
    static String format(List<IaCountersMXBean> ias, List<String> names, boolean reset, boolean aligned) {
        List<String[]> rows = new ArrayList<>();
        rows.add(HEADERS);
        for (IaCountersMXBean ia : ias) {
            if (!names.isEmpty() && !names.contains(ia.getIaName())) {
                continue;
            }
            Map<String, Long> counters = ia.getCounters();
            if (reset) {
                ia.reset();
            }
            if (counters.isEmpty()) {
                rows.add(new String[] {ia.getIaName(), ia.getProvider(), "-", "the provider does not count"});
            }
            counters.forEach((name, value) -> rows.add(new String[] {ia.getIaName(), ia.getProvider(), name,
                Long.toString(value)}));
        }
        if (rows.size() == 1) {
            return "no open IA" + (names.isEmpty() ? "" : " named " + String.join(", ", names)) + "\n";
        }
        int[] widths = RegistryTable.columnWidths(rows, HEADERS.length);
        StringBuilder sb = new StringBuilder();
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                sb.append(row[i]);
                if (i < row.length - 1) {
                    sb.append(aligned ? " ".repeat(widths[i] - row[i].length() + 2) : "\t");
                }
            }
            sb.append('\n');
        }
        return sb.toString();
    }
}
