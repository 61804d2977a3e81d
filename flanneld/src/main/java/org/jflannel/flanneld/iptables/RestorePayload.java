package org.jflannel.flanneld.iptables;

import java.util.List;
import java.util.Map;

/**
 * The stdin of {@code iptables-restore --noflush} (REFERENCE §8.3, upstream
 * {@code iptables_restore.go}): per table {@code *<table>\n}, one line per rule with its words
 * joined by single spaces and the argument after {@code --comment} wrapped in double quotes, then
 * {@code COMMIT\n}.
 */
public final class RestorePayload {
    private RestorePayload() {
    }

    /** {@code lines} per table, each line {@code <action> <chain> <spec...>}; tables in map order. */
    public static String build(Map<String, List<List<String>>> lines) {
        StringBuilder sb = new StringBuilder(512);
        for (Map.Entry<String, List<List<String>>> table : lines.entrySet()) {
            sb.append('*').append(table.getKey()).append('\n');
            for (List<String> line : table.getValue()) {
                for (int i = 0; i < line.size(); i++) {
                    if (i > 0) {
                        sb.append(' ');
                    }
                    boolean quoted = i > 0 && line.get(i - 1).equals("--comment");
                    sb.append(quoted ? "\"" : "").append(line.get(i)).append(quoted ? "\"" : "");
                }
                sb.append('\n');
            }
            sb.append("COMMIT\n");
        }
        return sb.toString();
    }
}
