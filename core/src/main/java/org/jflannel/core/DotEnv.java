package org.jflannel.core;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The subset of dotenv syntax (Go's godotenv, which upstream flanneld reads its previous
 * subnet.env with) that a subnet.env can hold: {@code KEY=value} or {@code KEY: value}, an optional
 * {@code export } prefix, blank and {@code #} comment lines, single or double quoted values,
 * inline comments after whitespace, CRLF line ends; a later line wins. As with godotenv a line it
 * cannot read makes the whole file unreadable. No variable expansion (flannel writes none).
 */
final class DotEnv {

    private DotEnv() {
    }

    /** The key/value pairs, or empty when a line is malformed. Never throws. */
    static Optional<Map<String, String>> parse(String content) {
        Map<String, String> values = new HashMap<>();
        for (String raw : content.split("\n", -1)) {
            String line = raw.endsWith("\r") ? raw.substring(0, raw.length() - 1) : raw;
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                continue;
            }
            if (trimmed.startsWith("export ") || trimmed.startsWith("export\t")) {
                trimmed = trimmed.substring("export".length()).strip();
            }
            int sep = separator(trimmed);
            if (sep <= 0) {
                return Optional.empty();
            }
            String key = trimmed.substring(0, sep).strip();
            if (key.isEmpty() || !validKey(key)) {
                return Optional.empty();
            }
            String value = value(trimmed.substring(sep + 1).strip());
            if (value == null) {
                return Optional.empty();
            }
            values.put(key, value);
        }
        return Optional.of(values);
    }

    private static int separator(String line) {
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == '=' || c == ':') {
                return i;
            }
        }
        return -1;
    }

    private static boolean validKey(String key) {
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (!(Character.isLetterOrDigit(c) || c == '_' || c == '.' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    /** The unquoted value; null when a quote is not closed or text follows the closing quote. */
    private static String value(String text) {
        if (!text.isEmpty() && (text.charAt(0) == '"' || text.charAt(0) == '\'')) {
            char quote = text.charAt(0);
            int end = text.indexOf(quote, 1);
            if (end < 0) {
                return null;
            }
            String rest = text.substring(end + 1).strip();
            if (!rest.isEmpty() && !rest.startsWith("#")) {
                return null;
            }
            return text.substring(1, end);
        }
        for (int i = 1; i < text.length(); i++) {
            if (text.charAt(i) == '#' && Character.isWhitespace(text.charAt(i - 1))) {
                return text.substring(0, i).strip();
            }
        }
        return text;
    }
}
