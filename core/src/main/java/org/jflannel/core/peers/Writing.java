package org.jflannel.core.peers;

import java.util.Set;

/**
 * How {@link PeerKernel#write} is asked to write a list of entries.
 *
 * @param bulk     many entries (a batch of {@link PeerLoop#BULK_MIN} or more added leases, or a replay): the kernel
 *                 side may pipeline them
 * @param first    the first batch (the complete lease list at start-up): entries may already be in the kernel
 * @param failing  entries whose last write failed (read-only), so a failure is reported loudly only once
 */
public record Writing<E>(boolean bulk, boolean first, Set<E> failing) {
    public Writing {
        failing = java.util.Collections.unmodifiableSet(failing);
    }
}
