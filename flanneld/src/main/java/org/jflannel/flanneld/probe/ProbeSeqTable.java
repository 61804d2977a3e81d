package org.jflannel.flanneld.probe;

/**
 * Which owner each outstanding echo sequence number belongs to: an array of all 65,536 16-bit
 * sequence numbers (256 KB), so matching a reply is one array read instead of a boxed-key hash
 * lookup. Numbers are handed out in order, skipping those still in use. Not thread-safe.
 */
final class ProbeSeqTable<T> {
    static final int SIZE = 1 << 16;

    private final Object[] owners = new Object[SIZE];
    private int last;
    private int used;

    /** A free sequence number, now owned by {@code owner}. */
    int claim(T owner) {
        if (used == SIZE) {
            throw new IllegalStateException("probe sequence numbers: all " + SIZE + " in use");
        }
        do {
            last = (last + 1) & (SIZE - 1);
        } while (owners[last] != null);
        owners[last] = owner;
        used++;
        return last;
    }

    /** The owner of {@code seq}; null when it is free. */
    @SuppressWarnings("unchecked")
    T owner(int seq) {
        return (T) owners[seq & (SIZE - 1)];
    }

    /** Frees {@code seq} (a free one stays free). */
    void release(int seq) {
        int i = seq & (SIZE - 1);
        if (owners[i] != null) {
            owners[i] = null;
            used--;
        }
    }

    int used() {
        return used;
    }
}
