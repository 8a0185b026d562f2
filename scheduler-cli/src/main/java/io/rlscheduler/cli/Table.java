package io.rlscheduler.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** A table with aligned, left-justified columns separated by two spaces; no trailing blanks. */
final class Table {
    private final List<String[]> rows = new ArrayList<>();
    private final int columns;

    Table(String... headers) {
        this.columns = headers.length;
        rows.add(headers);
    }

    Table(List<String> headers) {
        this(headers.toArray(new String[0]));
    }

    Table row(Object... cells) {
        String[] row = new String[columns];
        for (int i = 0; i < columns; i++) {
            Object cell = i < cells.length ? cells[i] : null;
            String s = cell == null ? "-" : cell.toString();
            row[i] = s.replace('\n', ' ').replace('\r', ' ').replace('\t', ' ');
        }
        rows.add(row);
        return this;
    }

    Table row(List<?> cells) {
        return row(cells.toArray());
    }

    /** The number of rows below the header. */
    int size() {
        return rows.size() - 1;
    }

    void print(PrintWriter out) {
        int[] widths = new int[columns];
        for (String[] row : rows) {
            for (int i = 0; i < columns; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < columns; i++) {
                if (i > 0) {
                    line.append("  ");
                }
                line.append(row[i]);
                if (i < columns - 1) {
                    char[] pad = new char[widths[i] - row[i].length()];
                    Arrays.fill(pad, ' ');
                    line.append(pad);
                }
            }
            out.println(line.toString().stripTrailing());
        }
        out.flush();
    }
}
