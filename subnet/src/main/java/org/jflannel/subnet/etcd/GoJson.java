package org.jflannel.subnet.etcd;

/**
 * The two bits of Go's {@code encoding/json} output that make our lease values byte-identical to
 * upstream's: string quoting (HTML-safe, lower-case hex) and the compaction of embedded raw JSON.
 */
final class GoJson {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private GoJson() {
    }

    /** Appends {@code s} as Go's json.Marshal quotes it (escapeHTML on). */
    static void quote(String s, StringBuilder out) {
        out.append('"');
        appendEscaped(s, 0, s.length(), out);
        out.append('"');
    }

    private static void appendEscaped(CharSequence s, int from, int to, StringBuilder out) {
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '<', '>', '&', '\u2028', '\u2029' -> unicode(c, out);
                default -> {
                    if (c < 0x20) {
                        unicode(c, out);
                    } else {
                        out.append(c);
                    }
                }
            }
        }
    }

    private static void unicode(char c, StringBuilder out) {
        out.append("\\u").append(HEX[c >> 12 & 0xf]).append(HEX[c >> 8 & 0xf]).append(HEX[c >> 4 & 0xf]).append(HEX[c & 0xf]);
    }

    /**
     * Appends raw JSON without insignificant whitespace and with {@code < > &} U+2028 U+2029 escaped
     * inside strings, as Go compacts a {@code json.RawMessage} when marshalling. The text must be JSON
     * (our backends produce it); unbalanced quotes are rejected.
     */
    static void compact(String json, StringBuilder out) {
        boolean inString = false;
        for (int i = 0; i < json.length(); i++) {
            char c = json.charAt(i);
            if (inString) {
                if (c == '\\' && i + 1 < json.length()) {
                    out.append(c).append(json.charAt(++i));
                } else if (c == '"') {
                    inString = false;
                    out.append(c);
                } else if (c == '<' || c == '>' || c == '&' || c == '\u2028' || c == '\u2029') {
                    unicode(c, out);
                } else {
                    out.append(c);
                }
            } else if (c == '"') {
                inString = true;
                out.append(c);
            } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                out.append(c);
            }
        }
        if (inString) {
            throw new IllegalArgumentException("backend data is not JSON (unterminated string): " + json);
        }
    }
}
