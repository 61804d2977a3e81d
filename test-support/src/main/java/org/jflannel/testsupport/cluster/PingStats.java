package org.jflannel.testsupport.cluster;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Counts of one {@code ping} run, parsed from its summary line. */
public record PingStats(int transmitted, int received, String output) {
    private static final Pattern SUMMARY = Pattern.compile("(\\d+) packets transmitted, (\\d+) (?:packets )?received");

    public PingStats {
        if (transmitted < 0 || received < 0 || received > transmitted) {
            throw new IllegalArgumentException("ping counts: transmitted=" + transmitted + " received=" + received);
        }
    }

    static PingStats parse(String output) {
        Matcher m = SUMMARY.matcher(output);
        if (!m.find()) {
            throw new IllegalArgumentException("no ping summary in: " + output);
        }
        return new PingStats(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), output);
    }

    /** Answered share, 0..1 (0 when nothing was sent). */
    public double answeredRatio() {
        return transmitted == 0 ? 0 : (double) received / transmitted;
    }

    @Override
    public String toString() {
        return received + "/" + transmitted + " answered";
    }
}
