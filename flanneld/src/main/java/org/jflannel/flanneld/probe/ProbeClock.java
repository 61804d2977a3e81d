package org.jflannel.flanneld.probe;

/**
 * Pure: a reply's round-trip time from the kernel's receive timestamp. Replies are read once per
 * tick, up to a tick after they arrived; the kernel stamps each packet on arrival
 * ({@code SO_TIMESTAMPNS}, wall clock), so that stamp, moved onto the {@link System#nanoTime()}
 * scale with one reading of both clocks per batch, is what the send time is subtracted from.
 */
final class ProbeClock {
    private ProbeClock() {
    }

    /**
     * @param sentNanos     when the probe left ({@code nanoTime} scale)
     * @param stampNanos    the kernel's receive time, wall clock ns since the epoch; 0 when there was none
     * @param wallMinusMono wall clock minus {@code nanoTime}, read when the batch was taken
     * @param nowNanos      when the batch was taken ({@code nanoTime})
     * @return the round trip in ns, never negative nor more than the time since sending (a clock step
     *         between the two readings cannot produce a nonsense value)
     */
    static long rttNanos(long sentNanos, long stampNanos, long wallMinusMono, long nowNanos) {
        long upper = Math.max(0, nowNanos - sentNanos);
        if (stampNanos == 0) {
            return upper;
        }
        long rtt = stampNanos - wallMinusMono - sentNanos;
        return Math.max(0, Math.min(rtt, upper));
    }
}
