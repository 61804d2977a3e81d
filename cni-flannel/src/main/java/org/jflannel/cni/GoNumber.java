package org.jflannel.cni;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * A JSON number as Go holds it in an {@code interface{}}: a float64. The literal is kept so
 * integer fields can report Go's {@code cannot unmarshal number 1.5 into ...} texts.
 */
record GoNumber(String text) {

    static GoNumber of(long value) {
        return new GoNumber(Long.toString(value));
    }

    /** The float64 value; infinite when the literal is out of range (Go rejects that when decoding). */
    double value() {
        return Double.parseDouble(text);
    }

    /** The value as a Go {@code int}, or null when the literal is not an integer Go would accept. */
    Long asInt() {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '.' || c == 'e' || c == 'E') {
                return null;
            }
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Go's encoding/json text of this number after a round trip through float64. */
    String goText() {
        return formatFloat(value());
    }

    /** encoding/json's float64 encoder: shortest digits, 'e' notation below 1e-6 and from 1e21. */
    static String formatFloat(double f) {
        if (f == Math.rint(f) && Math.abs(f) < 0x1p53) {
            return (f == 0 && 1 / f < 0) ? "-0" : Long.toString((long) f);
        }
        BigDecimal shortest = shortest(f);
        double abs = Math.abs(f);
        if (abs < 1e-6 || abs >= 1e21) {
            String digits = shortest.unscaledValue().abs().toString();
            int exp = digits.length() - 1 - shortest.scale();
            String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
            // Go writes at least two exponent digits, then cleans e-07 to e-7
            String e = exp < 0 ? "-" + (-exp) : "+" + (exp < 10 ? "0" : "") + exp;
            return (f < 0 ? "-" : "") + mantissa + "e" + e;
        }
        return shortest.toPlainString();
    }

    /** The fewest significant digits that still parse back to {@code f}. */
    private static BigDecimal shortest(double f) {
        BigDecimal exact = new BigDecimal(f);
        for (int p = 1; p <= 17; p++) {
            BigDecimal r = exact.round(new MathContext(p, RoundingMode.HALF_EVEN));
            if (r.doubleValue() == f) {
                return r.stripTrailingZeros();
            }
        }
        return exact;
    }
}
