package org.jdapl.registry;

import java.util.ArrayList;
import java.util.List;
import org.jdapl.dat.RegistryEntry;

/** Formats the registry's listing as a text table for people (shell commands, tools). */
public final class RegistryTable {
    private static final String[] HEADERS = {"IA NAME", "API", "PROVIDER", "THREADS", "SOURCE", "STATUS", "REASON"};

    private RegistryTable() {
    }

    /** One row per entry: IA name, API version, provider, thread safety, source, status, and its reason. */
    public static String format(List<RegistryEntry> entries) {
        List<String[]> rows = new ArrayList<>();
        rows.add(HEADERS);
        for (RegistryEntry e : entries) {
            String provider = e.provider() == null ? "-" : e.provider();
            if (!e.libPath().equals(e.provider())) {
                provider += " (" + e.libPath() + ")";
            }
            String status = e.openable() ? "OPENABLE" : e.present() ? "present" : "absent";
            rows.add(new String[] {e.iaName(), e.apiVersion() + (e.isDefault() ? "" : " nondefault"), provider,
                e.threadSafe() ? "threadsafe" : "nonthreadsafe", e.source(), status, e.status()});
        }
        int[] widths = columnWidths(rows, HEADERS.length);
        StringBuilder sb = new StringBuilder();
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                sb.append(row[i]);
                if (i < row.length - 1 && !row[i + 1].isEmpty()) {
                    sb.append(" ".repeat(widths[i] - row[i].length() + 2));
                }
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    /** The width of each of {@code columns} columns: its longest cell in {@code rows} (headers included). */
    static int[] columnWidths(List<String[]> rows, int columns) {
        int[] widths = new int[columns];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        return widths;
    }
}
