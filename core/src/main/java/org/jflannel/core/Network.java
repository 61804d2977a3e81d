package org.jflannel.core;

import java.util.List;

/**
 * A registered backend network: the own lease and the kernel state for every peer. {@link #apply}
 * and {@link #reconcile} run on the single {@code lease-events} thread, so implementations need no locks.
 */
public interface Network extends AutoCloseable {

    Lease lease();

    /** FLANNEL_MTU: the MTU pods should use on this network. */
    int mtu();

    /** Programs added peers and removes removed ones; idempotent; one bad peer never blocks the others. */
    void apply(List<LeaseEvent> batch);

    /** Re-applies the desired state and removes kernel entries that belong to no current lease. */
    void reconcile();

    @Override
    void close();
}
