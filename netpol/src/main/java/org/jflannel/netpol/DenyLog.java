package org.jflannel.netpol;

/**
 * Whether and how the table's chains hand the packets they drop to userspace: through NFLOG group {@code group},
 * under one limit for the whole table ({@value #LIMIT}: {@code packetsPerSecond}, bursts of twice that), the first
 * {@value #SNAPLEN} bytes of each (the IP and transport headers). {@code packetsPerSecond} 0: no logging at all.
 */
public record DenyLog(int group, int packetsPerSecond) {
    /** The named limit object of the table. */
    public static final String LIMIT = "deny_log";
    /** Bytes of each dropped packet copied out: an IPv6 header (40) and a transport header's ports, with room. */
    public static final int SNAPLEN = 128;
    /** Nothing logged. */
    public static final DenyLog OFF = new DenyLog(0, 0);
    /** The prefix of the log statement; the direction follows it. */
    public static final String PREFIX = "jflannel-netpol ";

    public DenyLog {
        if (group < 0 || group > 0xffff) {
            throw new IllegalArgumentException("NFLOG group: expected 0..65535, got " + group);
        }
        if (packetsPerSecond < 0) {
            throw new IllegalArgumentException("denied-packet log rate: expected 0 or more per second, got " + packetsPerSecond);
        }
    }

    public boolean on() {
        return packetsPerSecond > 0;
    }

    /** The limit object's declaration (inside the table). */
    String limitDeclaration() {
        return "limit " + LIMIT + " { rate " + packetsPerSecond + "/second burst " + 2 * packetsPerSecond + " packets; }";
    }

    /** The rule before a chain's drop: within the limit, the packet goes to the group, then on to the drop. */
    String rule(Direction d) {
        return "limit name \"" + LIMIT + "\" log prefix \"" + PREFIX + d.name().toLowerCase(java.util.Locale.ROOT) + "\" group " + group
                + " snaplen " + SNAPLEN;
    }
}
