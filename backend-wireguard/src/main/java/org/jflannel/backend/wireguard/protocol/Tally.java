package org.jflannel.backend.wireguard.protocol;

/**
 * Bytes counted for peers along a batch, so that the data path adds to a peer's shared counter once per run of
 * that peer's messages instead of once per packet: a batch's datagrams come in runs per peer (GRO trains per
 * sender; {@code TxQueue} flushes per endpoint), so that is one add per batch and peer. One per packet thread and
 * direction, reused; {@link #flush} when the batch ends. Not thread-safe.
 */
public final class Tally {
    private final boolean received;
    private Peer peer;
    private long bytes;

    private Tally(boolean received) {
        this.received = received;
    }

    /** Counts into the peers' received bytes. */
    public static Tally received() {
        return new Tally(true);
    }

    /** Counts into the peers' sent bytes. */
    public static Tally sent() {
        return new Tally(false);
    }

    /** {@code n} more bytes for {@code p}: kept here while the run of p's messages lasts. */
    public void add(Peer p, long n) {
        if (p != peer) {
            flush();
            peer = p;
        }
        bytes += n;
    }

    /** Hands what is kept to its peer's counter. */
    public void flush() {
        Peer p = peer;
        if (p != null) {
            (received ? p.rxBytes : p.txBytes).addAndGet(bytes);
            peer = null;
            bytes = 0;
        }
    }
}
