package org.jflannel.cni;

/** Go's text helpers that appear in messages: strconv.Quote (%q). */
final class GoText {

    private GoText() {
    }

    /** strconv.Quote: double quotes, Go escapes for control and non-printable characters. */
    static String quote(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); ) {
            int c = s.codePointAt(i);
            i += Character.charCount(c);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case 7 -> sb.append("\\a");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case 11 -> sb.append("\\v");
                default -> appendRune(sb, c);
            }
        }
        return sb.append('"').toString();
    }

    private static void appendRune(StringBuilder sb, int c) {
        if (c < 0x20 || c == 0x7f) {
            sb.append(String.format("\\x%02x", c));
        } else if (c < 0x7f || isPrint(c)) {
            sb.appendCodePoint(c);
        } else if (c < 0x10000) {
            sb.append(String.format("\\u%04x", c));
        } else {
            sb.append(String.format("\\U%08x", c));
        }
    }

    /** Approximates unicode.IsPrint: letters, marks, numbers, punctuation, symbols, ASCII space. */
    private static boolean isPrint(int c) {
        if (c == 0xfffd) {
            return true;
        }
        int t = Character.getType(c);
        return !(t == Character.CONTROL || t == Character.FORMAT || t == Character.SURROGATE
            || t == Character.PRIVATE_USE || t == Character.UNASSIGNED || t == Character.SPACE_SEPARATOR
            || t == Character.LINE_SEPARATOR || t == Character.PARAGRAPH_SEPARATOR);
    }

    /** Go's quoteChar: the byte as a rune in single quotes, escaped as strconv.Quote would. */
    static String quoteChar(int c) {
        if (c == '\'') {
            return "'\\''";
        }
        if (c == '"') {
            return "'\"'";
        }
        String q = quote(String.valueOf((char) c));
        return "'" + q.substring(1, q.length() - 1) + "'";
    }
}
