package org.jflannel.flanneld.daemon;

import java.util.Map;
import java.util.concurrent.Executor;
import org.jflannel.backend.vxlan.VxlanBackend;
import org.jflannel.backend.vxlan.VxlanNetwork;
import org.jflannel.core.Backend;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.MacAddress;
import org.jflannel.core.Network;
import org.jflannel.core.SubnetManager;
import org.jflannel.flanneld.health.Metrics;
import org.jflannel.subnet.kube.KubeSubnetManager;

/** Backend type → constructor, written out (no ServiceLoader): the backends this daemon can run. */
final class Backends {

    /** Builds a backend for the chosen interface; {@code leaseEvents} runs tasks on the lease-events thread. */
    @FunctionalInterface
    interface Factory {
        Backend create(ExternalInterface ext, SubnetManager subnets, Executor leaseEvents) throws StartupError;
    }

    static final Map<String, Factory> FACTORIES = Map.of(
            "vxlan", Backends::vxlan,
            "udp", (ext, subnets, leaseEvents) -> {
                throw new StartupError("Error fetching backend: udp backend is not supported yet");
            });

    private Backends() {
    }

    static Backend create(String type, ExternalInterface ext, SubnetManager subnets, Executor leaseEvents) throws StartupError {
        Factory f = FACTORIES.get(type);
        if (f == null) {
            throw new StartupError("Error fetching backend: unknown backend type: " + type);
        }
        return f.create(ext, subnets, leaseEvents);
    }

    private static Backend vxlan(ExternalInterface ext, SubnetManager subnets, Executor leaseEvents) {
        MacAddress mac = null;
        MacAddress mac6 = null;
        if (subnets instanceof KubeSubnetManager kube) { // §6.3: the VTEP MAC survives a restart through the annotations
            mac = kube.storedVtepMac(false).orElse(null);
            mac6 = kube.storedVtepMac(true).orElse(null);
        }
        return new VxlanBackend(ext, mac, mac6, leaseEvents);
    }

    /** Copies a backend's own counters into the metrics before each scrape (as deltas). */
    static void bridgeMetrics(Network network, Metrics metrics) {
        if (network instanceof VxlanNetwork vxlan) {
            long[] last = new long[3];
            metrics.addScrapeHook(() -> {
                synchronized (last) {
                    long p = vxlan.counters().entriesProgrammed();
                    long r = vxlan.counters().entriesRemoved();
                    long fix = vxlan.counters().repairs();
                    metrics.addKernelEntriesProgrammed(p - last[0]);
                    metrics.addKernelEntriesRemoved(r - last[1]);
                    metrics.addRepairs("vxlan", fix - last[2]);
                    last[0] = p;
                    last[1] = r;
                    last[2] = fix;
                }
            });
        }
    }
}
