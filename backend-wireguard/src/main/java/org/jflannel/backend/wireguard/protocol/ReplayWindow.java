package org.jflannel.backend.wireguard.protocol;

/**
 * The receive counter's sliding window (RFC 6479, as wireguard-go's {@code replay.Filter}): a ring
 * of 128 64-bit blocks, so the window spans 127 × 64 = 8,128 counters behind the highest seen.
 * Moving forward clears whole blocks instead of shifting bits. Call only after the packet
 * authenticated, or a forged counter would move the window. Counters are unsigned 64-bit.
 * Not thread-safe: the keypair's receive side is serialized by its caller.
 */
public final class ReplayWindow {
    private static final int BLOCK_BITS_LOG = 6;
    private static final int BLOCK_BITS = 1 << BLOCK_BITS_LOG;
    private static final int RING_BLOCKS = 128;
    private static final int BLOCK_MASK = RING_BLOCKS - 1;
    public static final long WINDOW = (RING_BLOCKS - 1) * (long) BLOCK_BITS;

    private final long[] ring = new long[RING_BLOCKS];
    private long last;

    /** True (and the counter recorded) when {@code counter} is below {@code limit} and not seen nor too old. */
    public boolean accept(long counter, long limit) {
        if (Long.compareUnsigned(counter, limit) >= 0) {
            return false;
        }
        long block = counter >>> BLOCK_BITS_LOG;
        if (Long.compareUnsigned(counter, last) > 0) {
            long current = last >>> BLOCK_BITS_LOG;
            long diff = Math.min(block - current, RING_BLOCKS);
            for (long i = current + 1; i <= current + diff; i++) {
                ring[(int) (i & BLOCK_MASK)] = 0;
            }
            last = counter;
        } else if (last - counter > WINDOW) {
            return false;
        }
        int index = (int) (block & BLOCK_MASK);
        long bit = 1L << (counter & (BLOCK_BITS - 1));
        long old = ring[index];
        ring[index] = old | bit;
        return (old & bit) == 0;
    }
}
