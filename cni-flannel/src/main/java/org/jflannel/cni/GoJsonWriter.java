package org.jflannel.cni;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Writes values the way Go's encoding/json does (REFERENCE §11.4): map keys sorted, strings with
 * HTML-safe escapes ({@code \u003c}, {@code \u2028}), numbers through float64. A {@link Fields}
 * map is a Go struct: its keys are written in insertion order instead.
 * {@link #compact} is json.Marshal; {@link #indent} is json.MarshalIndent with 4 spaces.
 */
final class GoJsonWriter {

    /** An object whose keys are written in insertion order, like the fields of a Go struct. */
    static final class Fields extends java.util.LinkedHashMap<String, Object> {
        private static final long serialVersionUID = 1L;

        Fields with(String key, Object value) {
            put(key, value);
            return this;
        }
    }

    private final StringBuilder out = new StringBuilder(256);
    private final boolean indent;

    private GoJsonWriter(boolean indent) {
        this.indent = indent;
    }

    static byte[] compact(Object value) {
        return write(value, false);
    }

    static byte[] indent(Object value) {
        return write(value, true);
    }

    private static byte[] write(Object value, boolean indent) {
        GoJsonWriter w = new GoJsonWriter(indent);
        w.value(value, 0);
        return w.out.toString().getBytes(StandardCharsets.UTF_8);
    }

    private void value(Object v, int level) {
        if (v == null) {
            out.append("null");
        } else if (v instanceof String s) {
            string(s);
        } else if (v instanceof Boolean b) {
            out.append(b.booleanValue());
        } else if (v instanceof GoNumber n) {
            out.append(n.goText());
        } else if (v instanceof Integer || v instanceof Long) {
            out.append(v);
        } else if (v instanceof Map<?, ?> m) {
            object(m, level);
        } else if (v instanceof List<?> l) {
            array(l, level);
        } else {
            throw new IllegalArgumentException("not a JSON value: " + v.getClass());
        }
    }

    private void object(Map<?, ?> m, int level) {
        if (m.isEmpty()) {
            out.append("{}");
            return;
        }
        List<String> keys = new ArrayList<>(m.size());
        for (Object k : m.keySet()) {
            keys.add((String) k);
        }
        if (!(m instanceof Fields)) {
            keys.sort(CODE_POINT_ORDER); // Go sorts map keys by their UTF-8 bytes
        }
        out.append('{');
        boolean first = true;
        for (String k : keys) {
            if (!first) {
                out.append(',');
            }
            first = false;
            newline(level + 1);
            string(k);
            out.append(indent ? ": " : ":");
            value(m.get(k), level + 1);
        }
        newline(level);
        out.append('}');
    }

    private void array(List<?> l, int level) {
        if (l.isEmpty()) {
            out.append("[]");
            return;
        }
        out.append('[');
        for (int i = 0; i < l.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            newline(level + 1);
            value(l.get(i), level + 1);
        }
        newline(level);
        out.append(']');
    }

    private void newline(int level) {
        if (indent) {
            out.append('\n');
            for (int i = 0; i < level; i++) {
                out.append("    ");
            }
        }
    }

    /** A class rather than a method reference: no lambda bootstrap at start-up. */
    private static final java.util.Comparator<String> CODE_POINT_ORDER = new java.util.Comparator<>() {
        @Override
        public int compare(String a, String b) {
            return compareCodePoints(a, b);
        }
    };

    static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private void string(String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '<', '>', '&', '\u2028', '\u2029' -> unicodeEscape(c);
                default -> {
                    if (c < 0x20) {
                        unicodeEscape(c);
                    } else if (Character.isSurrogate(c) && !validPair(s, i)) {
                        out.append("\\ufffd");
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    private static boolean validPair(String s, int i) {
        char c = s.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
        }
        return i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
    }

    private void unicodeEscape(char c) {
        out.append("\\u").append(HEX[c >> 12]).append(HEX[(c >> 8) & 0xf]).append(HEX[(c >> 4) & 0xf]).append(HEX[c & 0xf]);
    }
}
