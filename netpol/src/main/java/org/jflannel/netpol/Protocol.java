package org.jflannel.netpol;

/** A NetworkPolicyPort's protocol; all three carry the destination port at the same offset (nft's {@code th dport}). */
public enum Protocol {
    TCP, UDP, SCTP;

    /** Parses the API's value ({@code TCP}, {@code UDP}, {@code SCTP}; absent means TCP). */
    public static Protocol parse(String field, String value) {
        if (value == null || value.isEmpty()) {
            return TCP;
        }
        for (Protocol p : values()) {
            if (p.name().equals(value)) {
                return p;
            }
        }
        throw new IllegalArgumentException(field + ": expected TCP, UDP or SCTP, got \"" + value + "\"");
    }

    /** nft's name of the protocol ({@code meta l4proto tcp}). */
    public String nft() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
