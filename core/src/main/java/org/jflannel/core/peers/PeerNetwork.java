package org.jflannel.core.peers;

import java.util.List;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.Network;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A registered network whose peers a {@link PeerLoop} keeps: the {@link Network} SPI over the loop, for
 * the backends with kernel entries per peer (vxlan, host-gw). A subclass adds only what is its own (its
 * device, its counters, the netlink watch it starts through {@link PeerLoop#heal}).
 */
public abstract class PeerNetwork<E> implements Network {
    private static final Logger LOG = LoggerFactory.getLogger(PeerNetwork.class);

    private final Lease own;
    private final int mtu;
    /** The loop, for the subclass to start its healing on. */
    protected final PeerLoop<E> loop;
    private final AutoCloseable kernelHandle;

    /**
     * @param name          the backend, for log lines
     * @param kernelHandle  closed last (the backend's netlink socket); devices and entries stay (REFERENCE §9.4)
     */
    protected PeerNetwork(String name, Lease own, int mtu, PeerKernel<E> kernel, LoopCounters counters,
                          AutoCloseable kernelHandle) {
        this.own = own;
        this.mtu = mtu;
        this.loop = new PeerLoop<>(name, own, kernel, counters);
        this.kernelHandle = kernelHandle;
    }

    @Override
    public Lease lease() {
        return own;
    }

    @Override
    public int mtu() {
        return mtu;
    }

    @Override
    public void apply(List<LeaseEvent> batch) {
        loop.apply(batch);
    }

    /**
     * Ours (REFERENCE §6.10): brings back vanished devices, re-writes missing or wrong entries, re-checks
     * refused peers and, once the first complete lease list was applied, deletes entries of no current lease.
     */
    @Override
    public void reconcile() {
        loop.reconcile(true);
    }

    /** Number of peers with at least one programmed entry (lease-events thread). */
    public int peers() {
        return loop.peers();
    }

    /** Stops the loop and its healing (timer, netlink watch), then the kernel handle; the kernel keeps our entries. */
    @Override
    public void close() {
        loop.close();
        try {
            kernelHandle.close();
        } catch (Exception e) {
            LOG.warn("{} close failed error={}", getClass().getSimpleName(), e.toString());
        }
    }
}
