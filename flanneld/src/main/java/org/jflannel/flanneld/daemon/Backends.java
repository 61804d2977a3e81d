package org.jflannel.flanneld.daemon;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import org.jflannel.backend.extension.AllocBackend;
import org.jflannel.backend.extension.ExtensionBackend;
import org.jflannel.backend.hostgw.HostGwBackend;
import org.jflannel.backend.hostgw.HostGwNetwork;
import org.jflannel.backend.ipip.IpipBackend;
import org.jflannel.backend.ipip.IpipNetwork;
import org.jflannel.backend.ipsec.IpsecBackend;
import org.jflannel.backend.udp.UdpBackend;
import org.jflannel.backend.udp.UdpCounters;
import org.jflannel.backend.udp.UdpNetwork;
import org.jflannel.backend.vxlan.VxlanBackend;
import org.jflannel.backend.wireguard.WireguardBackend;
import org.jflannel.backend.wireguard.WireguardNetwork;
import org.jflannel.backend.wireguard.protocol.Counters;
import org.jflannel.backend.vxlan.VxlanNetwork;
import org.jflannel.backend.vxlan.VxlanSettings;
import org.jflannel.core.Backend;
import org.jflannel.core.ConfigException;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.MacAddress;
import org.jflannel.core.Network;
import org.jflannel.core.SubnetManager;
import org.jflannel.core.peers.PeerCounters;
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
            // strongSwan's charon as our child over VICI, XFRM policies per peer; not yet proven end to end (docs/ipsec.md)
            "ipsec", Backends::ipsec,
            "vxlan", Backends::vxlan,
            "udp", (ext, subnets, leaseEvents) -> new UdpBackend(ext),
            "host-gw", Backends::hostGw,
            "alloc", (ext, subnets, leaseEvents) -> new AllocBackend(ext),
            "extension", (ext, subnets, leaseEvents) -> new ExtensionBackend(ext),
            "ipip", (ext, subnets, leaseEvents) -> new IpipBackend(ext, leaseEvents),
            // the kernel's WireGuard, or ours in userspace on a TUN where it has none; key file from WIREGUARD_KEY_FILE as upstream
            "wireguard", (ext, subnets, leaseEvents) -> new WireguardBackend(ext));

    private Backends() {
    }

    static Backend create(String type, ExternalInterface ext, SubnetManager subnets, Executor leaseEvents) throws StartupError {
        Factory f = FACTORIES.get(type);
        if (f == null) {
            throw new StartupError("Error fetching backend: unknown backend type: " + type);
        }
        return f.create(ext, subnets, leaseEvents);
    }

    /**
     * As {@link #create(String, ExternalInterface, SubnetManager, Executor)}, with the VXLAN backend's
     * periodic reconcile every {@code vxlanReconcile} (zero: off; {@code --vxlan-reconcile-interval}) and its
     * routes through nexthop objects as {@code JFLANNEL_ROUTE_NEXTHOPS} in {@code env} says (Ours; on by default, off with
     * {@code JFLANNEL_ROUTE_NEXTHOPS=0}).
     */
    static Backend create(String type, ExternalInterface ext, SubnetManager subnets, Executor leaseEvents,
                          Duration vxlanReconcile, Map<String, String> env) throws StartupError {
        if (!type.equals("vxlan")) {
            return create(type, ext, subnets, leaseEvents);
        }
        VxlanSettings d = VxlanSettings.defaults();
        boolean nexthops;
        try {
            nexthops = VxlanSettings.routeNexthops(env, d.routeNexthops());
        } catch (ConfigException e) {
            throw new StartupError("Error fetching backend: " + e.getMessage(), e);
        }
        return vxlan(ext, subnets, leaseEvents, new VxlanSettings(d.sleeper(), vxlanReconcile, d.debounce(),
                d.recreateMin(), d.recreateMax(), nexthops));
    }

    private static Backend vxlan(ExternalInterface ext, SubnetManager subnets, Executor leaseEvents) {
        return vxlan(ext, subnets, leaseEvents, VxlanSettings.defaults());
    }

    private static Backend vxlan(ExternalInterface ext, SubnetManager subnets, Executor leaseEvents, VxlanSettings settings) {
        MacAddress mac = null;
        MacAddress mac6 = null;
        if (subnets instanceof KubeSubnetManager kube) { // §6.3: the VTEP MAC survives a restart through the annotations
            mac = kube.storedVtepMac(false).orElse(null);
            mac6 = kube.storedVtepMac(true).orElse(null);
        }
        return new VxlanBackend(ext, mac, mac6, leaseEvents, settings);
    }

    /** ipsec with JFLANNEL_IPSEC_DIR / JFLANNEL_IPSEC_PRIVATE_RUN from the environment (ours; IpsecSettings). */
    private static Backend ipsec(ExternalInterface ext, SubnetManager subnets, Executor leaseEvents) throws StartupError {
        try {
            return new IpsecBackend(ext, leaseEvents, org.jflannel.backend.ipsec.IpsecSettings.fromEnv(System.getenv()));
        } catch (ConfigException e) {
            throw new StartupError("Error fetching backend: " + e.field() + ": " + e.getMessage(), e);
        }
    }

    /** Upstream refuses a NAT'ed public IP when the backend is made: {@code Error fetching backend: your PublicIP differs ...}. */
    private static Backend hostGw(ExternalInterface ext, SubnetManager subnets, Executor leaseEvents) throws StartupError {
        try {
            return new HostGwBackend(ext, leaseEvents);
        } catch (IllegalArgumentException e) {
            throw new StartupError("Error fetching backend: " + e.getMessage(), e);
        }
    }

    /** Copies a backend's own counters into the metrics before each scrape (as deltas). */
    static void bridgeMetrics(Network network, Metrics metrics) {
        if (network instanceof UdpNetwork udp) {
            bridgeUdp(udp, metrics);
        }
        if (network instanceof HostGwNetwork hostGw) {
            bridgePeerCounters(hostGw.counters(), "host-gw", "hostgw_", metrics);
        }
        if (network instanceof IpipNetwork ipip) {
            bridgePeerCounters(ipip.counters(), "ipip", "ipip_", metrics);
        }
        if (network instanceof WireguardNetwork wg) {
            bridgeWireguard(wg, metrics);
            metrics.addScrapeHook(WireguardPeerScrape.of(wg, metrics)); // per-peer series, read at scrape time
        }
        if (network instanceof VxlanNetwork vxlan) {
            bridgePeerCounters(vxlan.counters(), "vxlan", "vxlan_", metrics);
        }
    }

    /** The userspace WireGuard's drops by reason over its devices, as errors {@code wireguard_<reason>} (as deltas). */
    private static void bridgeWireguard(WireguardNetwork network, Metrics metrics) {
        bridgeWireguardDrops(network::allCounters, metrics);
    }

    /**
     * Every drop the userspace data plane counts, by reason: malformed (a datagram of no known type or
     * length), no_peer (a packet from the TUN no peer's allowed IPs hold) and stale_keys (no session young
     * enough to send on) were counted but never exported before issue 38.
     */
    static void bridgeWireguardDrops(java.util.function.Supplier<List<Counters>> counters, Metrics metrics) {
        String[] names = {"bad_mac", "bad_handshake", "bad_auth", "replay", "bad_source", "unknown_index", "rate_limited",
            "malformed", "no_peer", "stale_keys"};
        long[] last = new long[names.length];
        metrics.addScrapeHook(() -> {
            synchronized (last) {
                long[] now = new long[names.length];
                for (var c : counters.get()) { // flannel-wg and, in separate mode, flannel-wg-v6
                    long[] one = {c.droppedBadMac.sum(), c.droppedBadHandshake.sum(), c.droppedBadAuth.sum(), c.droppedReplay.sum(),
                        c.droppedBadSource.sum(), c.droppedUnknownIndex.sum(), c.droppedRateLimited.sum(),
                        c.droppedMalformed.sum(), c.droppedNoPeer.sum(), c.droppedStaleKeys.sum()};
                    for (int i = 0; i < now.length; i++) {
                        now[i] += one[i];
                    }
                }
                for (int i = 0; i < now.length; i++) {
                    metrics.addErrors("wireguard_" + names[i], now[i] - last[i]);
                }
                System.arraycopy(now, 0, last, 0, now.length);
            }
        });
    }

    /**
     * Entries written, deleted and repaired, and errors by kind ({@code <errorPrefix><kind>}), from the
     * counters of a backend on the peer loop (as deltas). host-gw's entries are its routes.
     */
    private static <K extends Enum<K>> void bridgePeerCounters(PeerCounters<K> c,
                                                             String backend, String errorPrefix, Metrics metrics) {
        List<K> kinds = c.errorKinds();
        long[] last = new long[3 + kinds.size()];
        metrics.addScrapeHook(() -> {
            synchronized (last) {
                long[] now = new long[last.length];
                now[0] = c.entriesProgrammed();
                now[1] = c.entriesRemoved();
                now[2] = c.repairs();
                for (int i = 0; i < kinds.size(); i++) {
                    now[3 + i] = c.errors(kinds.get(i));
                }
                metrics.addKernelEntriesProgrammed(now[0] - last[0]);
                metrics.addKernelEntriesRemoved(now[1] - last[1]);
                metrics.addRepairs(backend, now[2] - last[2]);
                for (int i = 0; i < kinds.size(); i++) {
                    metrics.addErrors(errorPrefix + kinds.get(i).name().toLowerCase(java.util.Locale.ROOT), now[3 + i] - last[3 + i]);
                }
                System.arraycopy(now, 0, last, 0, now.length);
            }
        });
    }

    /** What the UDP backend's scrape hook reads: {@link UdpNetwork}'s counters and its kernel datapath's state. */
    interface UdpSource {
        UdpCounters counters();

        UdpNetwork.KernelCounts kernelCounts();

        /** One of {@link UdpNetwork#KERNEL_PATHS}. */
        String kernelPath();
    }

    private static void bridgeUdp(UdpNetwork udp, Metrics metrics) {
        metrics.addScrapeHook(udpScrapeHook(new UdpSource() {
            @Override
            public UdpCounters counters() {
                return udp.counters();
            }

            @Override
            public UdpNetwork.KernelCounts kernelCounts() {
                return udp.kernelCounts();
            }

            @Override
            public String kernelPath() {
                return udp.kernelPath();
            }
        }, metrics));
    }

    /**
     * Packets each way and drops by reason, from the UDP backend's counters, and its kernel datapath's packets, drops,
     * GPE deliveries (as deltas) and path (a gauge: 1 for the path it is on, 0 for the others).
     */
    static Runnable udpScrapeHook(UdpSource udp, Metrics metrics) {
        UdpCounters.Drop[] reasons = UdpCounters.Drop.values();
        Deltas d = new Deltas(7 + reasons.length);
        int k = 2 + reasons.length;
        return () -> {
            synchronized (d) {
                UdpCounters c = udp.counters();
                metrics.addUdpPackets("to_peers", d.next(0, c.packetsToPeers()));
                metrics.addUdpPackets("from_peers", d.next(1, c.packetsFromPeers()));
                for (int i = 0; i < reasons.length; i++) {
                    metrics.addUdpDrops(reasons[i].name().toLowerCase(java.util.Locale.ROOT), d.next(2 + i, c.drops(reasons[i])));
                }
                UdpNetwork.KernelCounts kernel = udp.kernelCounts();
                metrics.addUdpKernelPackets("to_peers", d.next(k, kernel.encapsulated()));
                metrics.addUdpKernelPackets("from_peers", d.next(k + 1, kernel.decapsulated()));
                metrics.addUdpKernelDrops("rewrite_failed", d.next(k + 2, kernel.failed()));
                metrics.addUdpKernelDrops("gpe_port", d.next(k + 3, kernel.refused()));
                metrics.addUdpKernelGpeDelivered(d.next(k + 4, kernel.gpeDelivered()));
                metrics.setUdpKernelPath(UdpNetwork.KERNEL_PATHS, udp.kernelPath());
            }
        };
    }

    /** The last value of each of a backend's counters, to hand them to {@link Metrics} as deltas. */
    private static final class Deltas {
        private final long[] last;

        Deltas(int n) {
            last = new long[n];
        }

        /** The growth of counter {@code i} since the last call; 0 for an unreadable (negative) value, which is skipped. */
        long next(int i, long now) {
            if (now < 0) {
                return 0;
            }
            long delta = now - last[i];
            last[i] = now;
            return delta;
        }
    }
}
