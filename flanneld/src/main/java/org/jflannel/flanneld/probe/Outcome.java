package org.jflannel.flanneld.probe;

/**
 * How one probe ended: answered, lost (no answer within the timeout), or refused with a reason
 * (send error such as EMSGSIZE, or an ICMP error sent back).
 *
 * @param detail empty for {@link #OK} and {@link #LOST}; otherwise what went wrong
 */
record Outcome(Kind kind, String detail, double rttSeconds) {
    enum Kind { OK, LOST, ERROR }

    static final Outcome LOST = new Outcome(Kind.LOST, "", 0);

    static Outcome ok(double rttSeconds) {
        return new Outcome(Kind.OK, "", rttSeconds);
    }

    static Outcome error(String detail) {
        return new Outcome(Kind.ERROR, detail, 0);
    }

    boolean ok() {
        return kind == Kind.OK;
    }

    /** {@code ok}, {@code lost} or {@code error: <detail>}, for /peers. */
    String describe() {
        return switch (kind) {
            case OK -> "ok";
            case LOST -> "lost";
            case ERROR -> "error: " + detail;
        };
    }
}
