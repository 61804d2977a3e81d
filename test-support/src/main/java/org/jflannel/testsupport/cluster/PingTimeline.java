package org.jflannel.testsupport.cluster;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * When the echo replies of one continuous {@code ping -D} from pod {@code from} to pod {@code to}
 * came back, between {@code start} (the prober started) and {@code stop} (it was stopped). A gap is
 * the time between two consecutive replies, or between start or stop and the nearest reply, so a
 * pair that stopped answering for good shows a gap that runs to {@code stop}.
 */
public record PingTimeline(Pod from, Pod to, Instant start, Instant stop, List<Instant> replies) {
    /** iputils' {@code -D} reply line: {@code [1795630024.902577] 64 bytes from 10.244.1.2: icmp_seq=1 ttl=62 ...}. */
    private static final Pattern REPLY = Pattern.compile("^\\[(\\d+\\.\\d+)] \\d+ bytes from [^:]+: icmp_seq=\\d+ .*");

    public PingTimeline {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        if (stop.isBefore(start)) {
            throw new IllegalArgumentException("ping timeline " + from.name() + " -> " + to.name() + ": stop " + stop
                    + " before start " + start);
        }
        replies = replies.stream().sorted().toList();
    }

    /** The replies in {@code pingOutput} ({@code ping -n -D}); duplicates ({@code DUP!}) and other lines are left out. */
    public static PingTimeline parse(Pod from, Pod to, Instant start, Instant stop, String pingOutput) {
        List<Instant> replies = new ArrayList<>();
        for (String line : pingOutput.lines().toList()) {
            Matcher m = REPLY.matcher(line);
            if (m.matches() && !line.contains("DUP!")) {
                BigDecimal seconds = new BigDecimal(m.group(1));
                long s = seconds.longValue();
                long nanos = seconds.subtract(BigDecimal.valueOf(s)).movePointRight(9).longValue();
                replies.add(Instant.ofEpochSecond(s, nanos));
            }
        }
        return new PingTimeline(from, to, start, stop, replies);
    }

    /** The longest gap over the whole run. */
    public Duration longestGap() {
        return longestGapDuring(start, stop);
    }

    /**
     * The longest gap that overlaps the window {@code [from, until)}: a gap that began before the
     * window and ended in it (or later) counts whole, as it is the outage the window saw.
     */
    public Duration longestGapDuring(Instant from, Instant until) {
        List<Instant> points = new ArrayList<>(replies.size() + 2);
        points.add(start);
        replies.stream().filter(r -> !r.isBefore(start) && !r.isAfter(stop)).forEach(points::add);
        points.add(stop);
        Duration longest = Duration.ZERO;
        for (int i = 1; i < points.size(); i++) {
            Instant a = points.get(i - 1);
            Instant b = points.get(i);
            if (b.isAfter(from) && a.isBefore(until)) {
                Duration gap = Duration.between(a, b);
                if (gap.compareTo(longest) > 0) {
                    longest = gap;
                }
            }
        }
        return longest;
    }

    /** How many replies came back within {@code [from, until)}. */
    public long repliesDuring(Instant from, Instant until) {
        return replies.stream().filter(r -> !r.isBefore(from) && r.isBefore(until)).count();
    }

    public String pair() {
        return from.name() + " -> " + to.name();
    }
}
