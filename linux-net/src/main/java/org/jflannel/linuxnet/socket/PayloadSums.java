package org.jflannel.linuxnet.socket;

/**
 * The one's complement sums of echo payloads (the fixed pattern of {@link IcmpCodec}) for the last
 * few ICMP lengths used: a prober sends two lengths (small and full-size), so each probe's checksum
 * is its header words plus a cached sum, with no pass over the payload and no boxed map lookup. Not
 * thread-safe: one per sender.
 */
final class PayloadSums {
    private final int[] lengths = new int[4];
    private final long[] sums = new long[4];
    private int next;

    /** The payload sum of an echo message of {@code icmpLength} bytes (header included). */
    long of(int icmpLength) {
        for (int i = 0; i < lengths.length; i++) {
            if (lengths[i] == icmpLength) {
                return sums[i];
            }
        }
        int i = next;
        next = (next + 1) % lengths.length;
        sums[i] = IcmpCodec.payloadSum(icmpLength);
        lengths[i] = icmpLength;
        return sums[i];
    }
}
