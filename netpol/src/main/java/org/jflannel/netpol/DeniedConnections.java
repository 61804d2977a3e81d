package org.jflannel.netpol;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Turns the packets the table drops (as NFLOG hands them over: the rule's prefix, the first bytes from the IP header)
 * into log lines at a bounded rate: one line per connection attempt (the same direction, protocol, addresses and
 * destination port within {@link #REPEAT_NANOS} is the same attempt: a SYN sent again, the next datagram), at most
 * {@code linesPerSecond} lines a second, and what was left out counted and said in one line per
 * {@link #SUMMARY_NANOS} at most. A flood of denied packets costs a few lines, never one per packet. Not
 * thread-safe: one reader thread.
 */
public final class DeniedConnections {
    static final long REPEAT_NANOS = 10_000_000_000L;
    static final long SUMMARY_NANOS = 10_000_000_000L;
    private static final int MAX_REMEMBERED = 4096;

    /** What one dropped packet says: its direction, transport protocol (a name, or the IP protocol number), ends and ports (-1: none). */
    public record Denied(Direction direction, String protocol, Addr source, int sourcePort, Addr destination, int destinationPort) {
        /** What makes two packets the same attempt: all but the source port (a client trying again from a new socket is the same attempt). */
        Denied attempt() {
            return new Denied(direction, protocol, source, -1, destination, destinationPort);
        }
    }

    private final int linesPerSecond;
    private final Function<Addr, String> podAt;
    private final LongSupplier clock;
    private final Map<Denied, Long> recent = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Denied, Long> e) {
            return size() > MAX_REMEMBERED;
        }
    };
    private long windowStart;
    private int linesInWindow;
    private long notLogged;
    private long repeats;
    private long lastSummary;
    private long logged;
    private long undecodable;

    /** {@code podAt}: the pod ("namespace/name") holding an address, or null; {@code clock}: nanoseconds. */
    public DeniedConnections(int linesPerSecond, Function<Addr, String> podAt, LongSupplier clock) {
        if (linesPerSecond < 1) {
            throw new IllegalArgumentException("denied-connection log lines: expected 1 or more a second, got " + linesPerSecond);
        }
        this.linesPerSecond = linesPerSecond;
        this.podAt = podAt;
        this.clock = clock;
        this.lastSummary = clock.getAsLong();
        this.windowStart = lastSummary;
    }

    /** The line to log for this dropped packet, if any (a repeat, over the rate, or not ours: none). */
    public Optional<String> accept(String prefix, byte[] packet) {
        Optional<Denied> d = parse(prefix, packet);
        if (d.isEmpty()) {
            undecodable++;
            return Optional.empty();
        }
        long now = clock.getAsLong();
        Denied key = d.get().attempt();
        Long seen = recent.get(key);
        recent.put(key, now);
        if (seen != null && now - seen < REPEAT_NANOS) {
            repeats++;
            return Optional.empty();
        }
        if (now - windowStart >= 1_000_000_000L) {
            windowStart = now;
            linesInWindow = 0;
        }
        if (linesInWindow >= linesPerSecond) {
            notLogged++;
            return Optional.empty();
        }
        linesInWindow++;
        logged++;
        return Optional.of(line(d.get()));
    }

    /** Once per {@link #SUMMARY_NANOS} at most: how many denied connections went unlogged since the last such line. */
    public Optional<String> summary() {
        long now = clock.getAsLong();
        if (notLogged == 0 || now - lastSummary < SUMMARY_NANOS) {
            return Optional.empty();
        }
        String s = "network policy denied connections not logged count=" + notLogged + " seconds=" + (now - lastSummary) / 1_000_000_000L
                + " (over " + linesPerSecond + " lines a second)";
        notLogged = 0;
        lastSummary = now;
        return Optional.of(s);
    }

    /** Lines logged, attempts seen again within the repeat window, packets that were not a denial of ours. */
    public long logged() {
        return logged;
    }

    public long repeats() {
        return repeats;
    }

    public long undecodable() {
        return undecodable;
    }

    private String line(Denied d) {
        StringBuilder sb = new StringBuilder("network policy denied direction=").append(d.direction().name().toLowerCase(Locale.ROOT))
                .append(" protocol=").append(d.protocol());
        end(sb, "source", d.source());
        end(sb, "destination", d.destination());
        if (d.destinationPort() >= 0) {
            sb.append(" port=").append(d.destinationPort());
        }
        return sb.toString();
    }

    private void end(StringBuilder sb, String key, Addr a) {
        sb.append(' ').append(key).append('=').append(a);
        String pod = podAt.apply(a);
        if (pod != null) {
            sb.append(' ').append(key).append("_pod=").append(pod);
        }
    }

    /**
     * A dropped packet of ours: the prefix names the direction ({@link DenyLog#PREFIX} then {@code ingress} or
     * {@code egress}), the bytes start with an IPv4 or IPv6 header; the transport's ports when it is TCP, UDP or SCTP
     * and they were copied. Anything else (another prefix, a truncated or odd header): empty.
     */
    public static Optional<Denied> parse(String prefix, byte[] p) {
        Direction dir;
        if ((DenyLog.PREFIX + "ingress").equals(prefix)) {
            dir = Direction.INGRESS;
        } else if ((DenyLog.PREFIX + "egress").equals(prefix)) {
            dir = Direction.EGRESS;
        } else {
            return Optional.empty();
        }
        if (p == null || p.length < 1) {
            return Optional.empty();
        }
        int version = (p[0] & 0xff) >>> 4;
        int proto;
        int l4;
        Addr src;
        Addr dst;
        if (version == 4 && p.length >= 20) {
            int ihl = (p[0] & 0x0f) * 4;
            if (ihl < 20) {
                return Optional.empty();
            }
            proto = p[9] & 0xff;
            src = new Addr(4, 0, Integer.toUnsignedLong(int32(p, 12)));
            dst = new Addr(4, 0, Integer.toUnsignedLong(int32(p, 16)));
            boolean firstFragment = ((p[6] & 0x1f) | (p[7] & 0xff)) == 0;
            l4 = firstFragment ? ihl : Integer.MAX_VALUE;
        } else if (version == 6 && p.length >= 40) {
            proto = p[6] & 0xff;
            src = new Addr(6, int64(p, 8), int64(p, 16));
            dst = new Addr(6, int64(p, 24), int64(p, 32));
            l4 = 40;
        } else {
            return Optional.empty();
        }
        String name = switch (proto) {
            case 6 -> "tcp";
            case 17 -> "udp";
            case 132 -> "sctp";
            case 1 -> "icmp";
            case 58 -> "icmpv6";
            default -> Integer.toString(proto);
        };
        boolean ports = (proto == 6 || proto == 17 || proto == 132) && l4 <= p.length - 4;
        int sport = ports ? ((p[l4] & 0xff) << 8) | (p[l4 + 1] & 0xff) : -1;
        int dport = ports ? ((p[l4 + 2] & 0xff) << 8) | (p[l4 + 3] & 0xff) : -1;
        return Optional.of(new Denied(dir, name, src, sport, dst, dport));
    }

    private static int int32(byte[] p, int at) {
        return ((p[at] & 0xff) << 24) | ((p[at + 1] & 0xff) << 16) | ((p[at + 2] & 0xff) << 8) | (p[at + 3] & 0xff);
    }

    private static long int64(byte[] p, int at) {
        return (Integer.toUnsignedLong(int32(p, at)) << 32) | Integer.toUnsignedLong(int32(p, at + 4));
    }
}
