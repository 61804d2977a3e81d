package org.jflannel.cni;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A JSON reader that accepts exactly what Go's encoding/json accepts and fails with its texts
 * ({@code invalid character 'x' looking for beginning of value}, {@code unexpected end of JSON input}),
 * because the plugin's error messages are part of its contract (REFERENCE §11.7). It also starts
 * faster than Jackson: a handful of small classes instead of a parser factory.
 *
 * <p>Values: {@link Map} (a {@link LinkedHashMap} in document order; a repeated key keeps its last
 * value, as Go does), {@link List}, {@link String}, {@link Boolean}, {@link GoNumber}, null.
 * Strings with invalid UTF-8 get U+FFFD, as in Go.
 */
final class GoJson {

    /**
     * Ours: Go stops at 10,000 levels; the plugin runs interpreted on a 512 KiB stack (the launcher's
     * -Xint -Xss512k), where parsing and then writing the delegate config overflowed between 1,000 and
     * 1,500 levels (a StackOverflowError, no CNI error on stdout; found by CniStdinFuzzTest). 500 keeps
     * a threefold margin; real configs nest fewer than ten levels.
     */
    static final int MAX_DEPTH = 500;

    private final byte[] in;
    private int pos;
    private int depth;

    private GoJson(byte[] in) {
        this.in = in;
    }

    /** A syntax error with Go's message. */
    static final class SyntaxException extends Exception {
        private static final long serialVersionUID = 1L;

        SyntaxException(String message) {
            super(message, null, false, false);
        }
    }

    static Object parse(byte[] json) throws SyntaxException {
        GoJson p = new GoJson(json);
        p.skipSpace();
        Object v = p.value();
        p.skipSpace();
        if (p.pos < p.in.length) {
            throw p.invalid("after top-level value");
        }
        return v;
    }

    static Object parse(String json) throws SyntaxException {
        return parse(json.getBytes(StandardCharsets.UTF_8));
    }

    private Object value() throws SyntaxException {
        if (pos >= in.length) {
            throw eof();
        }
        byte c = in[pos];
        switch (c) {
            case '{':
                return object();
            case '[':
                return array();
            case '"':
                pos++;
                return string();
            case 't':
                literal("true");
                return Boolean.TRUE;
            case 'f':
                literal("false");
                return Boolean.FALSE;
            case 'n':
                literal("null");
                return null;
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw invalid("looking for beginning of value");
        }
    }

    private Map<String, Object> object() throws SyntaxException {
        enter();
        pos++;
        Map<String, Object> map = new LinkedHashMap<>();
        skipSpace();
        if (peek() == '}') {
            pos++;
            depth--;
            return map;
        }
        while (true) {
            if (peek() != '"') {
                throw pos >= in.length ? eof() : invalid("looking for beginning of object key string");
            }
            pos++;
            String key = string();
            skipSpace();
            if (peek() != ':') {
                throw pos >= in.length ? eof() : invalid("after object key");
            }
            pos++;
            skipSpace();
            Object v = value();
            map.remove(key); // Go: the last occurrence wins
            map.put(key, v);
            skipSpace();
            int c = peek();
            pos++;
            if (c == '}') {
                depth--;
                return map;
            }
            if (c != ',') {
                pos--;
                throw pos >= in.length ? eof() : invalid("after object key:value pair");
            }
            skipSpace();
        }
    }

    private List<Object> array() throws SyntaxException {
        enter();
        pos++;
        List<Object> list = new ArrayList<>();
        skipSpace();
        if (peek() == ']') {
            pos++;
            depth--;
            return list;
        }
        while (true) {
            list.add(value());
            skipSpace();
            int c = peek();
            pos++;
            if (c == ']') {
                depth--;
                return list;
            }
            if (c != ',') {
                pos--;
                throw pos >= in.length ? eof() : invalid("after array element");
            }
            skipSpace();
        }
    }

    private void enter() throws SyntaxException {
        if (++depth > MAX_DEPTH) {
            throw new SyntaxException("exceeded max depth");
        }
    }

    /** After the opening quote. */
    private String string() throws SyntaxException {
        int start = pos;
        boolean simple = true;
        while (true) {
            if (pos >= in.length) {
                throw eof();
            }
            int c = in[pos] & 0xff;
            if (c == '"') {
                break;
            }
            if (c < 0x20) {
                throw invalid("in string literal");
            }
            if (c == '\\') {
                simple = false;
                scanEscape();
            }
            pos++;
        }
        int end = pos++;
        if (simple) {
            return new String(in, start, end - start, StandardCharsets.UTF_8);
        }
        return unescape(start, end);
    }

    /** Checks the escape after a backslash at {@code pos}; leaves {@code pos} on its last character. */
    private void scanEscape() throws SyntaxException {
        pos++;
        if (pos >= in.length) {
            throw eof();
        }
        int e = in[pos];
        if (e == 'u') {
            for (int i = 0; i < 4; i++) {
                pos++;
                if (pos >= in.length) {
                    throw eof();
                }
                if (Character.digit(in[pos], 16) < 0) {
                    throw invalid("in \\u hexadecimal character escape");
                }
            }
        } else if ("\"\\/bfnrt".indexOf(e) < 0) {
            throw invalid("in string escape code");
        }
    }

    private String unescape(int start, int end) {
        StringBuilder sb = new StringBuilder(end - start);
        int i = start;
        while (i < end) {
            int runEnd = i;
            while (runEnd < end && in[runEnd] != '\\') {
                runEnd++;
            }
            sb.append(new String(in, i, runEnd - i, StandardCharsets.UTF_8));
            if (runEnd >= end) {
                break;
            }
            char e = (char) in[runEnd + 1];
            i = runEnd + 2;
            switch (e) {
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'n' -> sb.append('\n');
                case 'r' -> sb.append('\r');
                case 't' -> sb.append('\t');
                case 'u' -> {
                    char u = (char) Integer.parseInt(new String(in, i, 4, StandardCharsets.US_ASCII), 16);
                    i += 4;
                    if (Character.isHighSurrogate(u) && i + 6 <= end && in[i] == '\\' && in[i + 1] == 'u') {
                        char low = (char) Integer.parseInt(new String(in, i + 2, 4, StandardCharsets.US_ASCII), 16);
                        if (Character.isLowSurrogate(low)) {
                            sb.append(u).append(low);
                            i += 6;
                            continue;
                        }
                    }
                    sb.append(Character.isSurrogate(u) ? '\ufffd' : u); // Go: a lone surrogate is U+FFFD
                }
                default -> sb.append(e); // " \ /
            }
        }
        return sb.toString();
    }

    private GoNumber number() throws SyntaxException {
        int start = pos;
        if (in[pos] == '-') {
            pos++;
            if (pos >= in.length) {
                throw eof();
            }
            if (!isDigit(in[pos])) {
                throw invalid("in numeric literal");
            }
        }
        if (in[pos] == '0') {
            pos++;
        } else {
            digits();
        }
        if (pos < in.length && in[pos] == '.') {
            pos++;
            if (pos >= in.length) {
                throw eof();
            }
            if (!isDigit(in[pos])) {
                throw invalid("after decimal point in numeric literal");
            }
            digits();
        }
        if (pos < in.length && (in[pos] == 'e' || in[pos] == 'E')) {
            pos++;
            if (pos < in.length && (in[pos] == '+' || in[pos] == '-')) {
                pos++;
            }
            if (pos >= in.length) {
                throw eof();
            }
            if (!isDigit(in[pos])) {
                throw invalid("in exponent of numeric literal");
            }
            digits();
        }
        return new GoNumber(new String(in, start, pos - start, StandardCharsets.US_ASCII));
    }

    private void digits() {
        while (pos < in.length && isDigit(in[pos])) {
            pos++;
        }
    }

    private static boolean isDigit(byte b) {
        return b >= '0' && b <= '9';
    }

    private void literal(String word) throws SyntaxException {
        pos++;
        for (int i = 1; i < word.length(); i++, pos++) {
            if (pos >= in.length) {
                throw eof();
            }
            if (in[pos] != word.charAt(i)) {
                throw invalid("in literal " + word + " (expecting '" + word.charAt(i) + "')");
            }
        }
    }

    private int peek() {
        return pos < in.length ? in[pos] : -1;
    }

    private void skipSpace() {
        while (pos < in.length) {
            byte c = in[pos];
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private static SyntaxException eof() {
        return new SyntaxException("unexpected end of JSON input");
    }

    private SyntaxException invalid(String context) {
        return new SyntaxException("invalid character " + GoText.quoteChar(in[pos] & 0xff) + " " + context);
    }
}
