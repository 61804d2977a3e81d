package org.jflannel.flanneld.config;

/**
 * Parses flag values the way Go's {@code flag} package does, so a command line that upstream
 * flanneld accepts means the same here: booleans as {@code strconv.ParseBool}, integers as
 * {@code strconv.ParseInt(s, 0, ...)} (base prefixes {@code 0x}, {@code 0o}, {@code 0b}, a
 * leading {@code 0} for octal, and {@code _} between digits).
 */
final class GoValues {

    private GoValues() {
    }

    /** Go's ParseBool; throws IllegalArgumentException("parse error") otherwise. */
    static boolean parseBool(String s) {
        switch (s) {
            case "1", "t", "T", "TRUE", "true", "True":
                return true;
            case "0", "f", "F", "FALSE", "false", "False":
                return false;
            default:
                throw new IllegalArgumentException("parse error");
        }
    }

    /** Go's ParseInt(s, 0, 32); "parse error" or "value out of range". */
    static int parseInt(String s) {
        String body = s;
        boolean negative = false;
        if (!body.isEmpty() && (body.charAt(0) == '+' || body.charAt(0) == '-')) {
            negative = body.charAt(0) == '-';
            body = body.substring(1);
        }
        int radix = 10;
        String digits = body;
        boolean prefixed = false;
        if (body.length() > 1 && body.charAt(0) == '0') {
            char c = Character.toLowerCase(body.charAt(1));
            if (c == 'x' || c == 'o' || c == 'b') {
                radix = c == 'x' ? 16 : c == 'o' ? 8 : 2;
                digits = body.substring(2);
            } else {
                radix = 8;
                digits = body.substring(1);
            }
            prefixed = true;
        }
        if (digits.indexOf('_') >= 0) {
            if (!underscoresOk(digits, prefixed)) {
                throw new IllegalArgumentException("parse error");
            }
            digits = digits.replace("_", "");
        }
        if (digits.isEmpty() || digits.charAt(0) == '+' || digits.charAt(0) == '-') {
            throw new IllegalArgumentException("parse error");
        }
        long value;
        try {
            value = Long.parseLong(digits, radix);
        } catch (NumberFormatException e) {
            int base = radix;
            boolean allDigits = digits.chars().allMatch(ch -> Character.digit(ch, base) >= 0);
            throw new IllegalArgumentException(allDigits ? "value out of range" : "parse error");
        }
        value = negative ? -value : value;
        if (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("value out of range");
        }
        return (int) value;
    }

    /** Underscores only between digits, or between the base prefix and a digit. */
    private static boolean underscoresOk(String digits, boolean prefixed) {
        char previous = prefixed ? '0' : '_'; // a prefix counts as a digit before the first '_'
        if (!prefixed && digits.startsWith("_")) {
            return false;
        }
        for (int i = 0; i < digits.length(); i++) {
            char c = digits.charAt(i);
            if (c == '_' && previous == '_') {
                return false;
            }
            previous = c;
        }
        return previous != '_';
    }
}
