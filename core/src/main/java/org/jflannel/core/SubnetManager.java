package org.jflannel.core;

import java.io.IOException;
import java.util.List;
import java.util.function.Consumer;

/**
 * Where leases come from (upstream {@code subnet.Manager}): the Kubernetes Node objects or etcd.
 * Implementations: {@code subnet.kube.KubeSubnetManager}, {@code subnet.etcd.EtcdSubnetManager}.
 */
public interface SubnetManager extends AutoCloseable {

    /** {@code kube} or {@code etcd}, for logs. */
    String name();

    /** The cluster network configuration (kube: the net-conf.json file; etcd: {@code <prefix>/config}). */
    NetConf networkConfig() throws IOException, InterruptedException, ConfigException;

    /** Acquires (or re-acquires) this node's lease, publishing {@code attrs}. Renewal is the implementation's business. */
    Lease acquireLease(LeaseAttrs attrs) throws IOException, InterruptedException, ConfigException;

    /**
     * Streams the other nodes' leases to {@code sink}: first one batch with a snapshot of all current
     * leases (as ADDED events; possibly empty), then changes, in order, on one thread owned by the
     * implementation. The own lease may be included; {@link LeaseWatcher} filters it.
     */
    Subscription watchLeases(Consumer<List<LeaseEvent>> sink) throws IOException;

    /** Called once the backend runs (kube: sets NetworkUnavailable=False; etcd: nothing). */
    void completeLease(Lease own) throws IOException, InterruptedException;

    @Override
    void close();
}
