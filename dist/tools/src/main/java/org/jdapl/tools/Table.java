package org.jdapl.tools;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * A plain-text table for people: a header, a rule and rows, each column as wide as its widest
 * cell. Columns whose header is flagged numeric are right-aligned.
 */
public final class Table {
    private final List<String> headers = new ArrayList<>();
    private final List<Boolean> rightAligned = new ArrayList<>();
    private final List<List<String>> rows = new ArrayList<>();

    /** Adds a left-aligned column. */
    public Table column(String header) {
        headers.add(header);
        rightAligned.add(false);
        return this;
    }

    /** Adds a right-aligned (numeric) column. */
    public Table numeric(String header) {
        headers.add(header);
        rightAligned.add(true);
        return this;
    }

    /** Adds a row; missing cells are blank, nulls print as {@code -}. */
    public Table row(Object... cells) {
        List<String> row = new ArrayList<>();
        for (Object cell : cells) {
            row.add(cell == null ? "-" : cell.toString());
        }
        rows.add(row);
        return this;
    }

    /** The number of rows. */
    public int size() {
        return rows.size();
    }

    /** Prints the table, each line indented by {@code indent}. */
    public void print(PrintStream out, String indent) {
        int[] widths = new int[headers.size()];
        for (int c = 0; c < widths.length; c++) {
            widths[c] = headers.get(c).length();
            for (List<String> row : rows) {
                if (c < row.size()) {
                    widths[c] = Math.max(widths[c], row.get(c).length());
                }
            }
        }
        out.println(indent + line(headers, widths));
        StringBuilder rule = new StringBuilder();
        for (int c = 0; c < widths.length; c++) {
            rule.append(c == 0 ? "" : "  ").append("-".repeat(widths[c]));
        }
        out.println(indent + rule);
        for (List<String> row : rows) {
            out.println(indent + line(row, widths));
        }
    }

    private String line(List<String> cells, int[] widths) {
        StringBuilder line = new StringBuilder();
        for (int c = 0; c < widths.length; c++) {
            String cell = c < cells.size() ? cells.get(c) : "";
            if (c > 0) {
                line.append("  ");
            }
            String pad = " ".repeat(widths[c] - cell.length());
            if (rightAligned.get(c)) {
                line.append(pad).append(cell);
            } else if (c < widths.length - 1) {
                line.append(cell).append(pad);
            } else {
                line.append(cell);
            }
        }
        return line.toString();
    }
}
