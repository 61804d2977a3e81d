package org.jflannel.flanneld.health;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The daemon's Prometheus metrics (served at {@code /metrics}). Its methods match plain functional
 * interfaces ({@code ObjLongConsumer<String>}, {@code Consumer<String>}), so a backend can report
 * through a method reference without depending on this module.
 *
 * <ul>
 *   <li>{@code flanneld_leases}: other nodes' leases currently known</li>
 *   <li>{@code flanneld_kernel_entries_programmed_total}, {@code flanneld_kernel_entries_removed_total}:
 *       kernel entries (neighbour, FDB, route) the backend wrote or deleted</li>
 *   <li>{@code flanneld_reconcile_repairs_total{kind}}: entries or rule sets put back after drift</li>
 *   <li>{@code flanneld_lease_event_programmed_seconds}: lease event received → kernel entries programmed</li>
 *   <li>{@code flanneld_errors_total{kind}}: errors by kind (lease, apply, reconcile, iptables, blackhole, ...)</li>
 *   <li>{@code flanneld_udp_packets_total{direction}}, {@code flanneld_udp_dropped_packets_total{reason}}: the UDP
 *       backend's forwarding (only with Backend.Type udp); {@code flanneld_udp_kernel_packets_total{direction}}:
 *       what its kernel datapath carried instead; {@code flanneld_udp_kernel_dropped_packets_total{reason}}: what its
 *       programs dropped ({@code rewrite_failed}, {@code gpe_port}); {@code flanneld_udp_kernel_gpe_delivered_packets_total}:
 *       what the VXLAN-GPE device's gate handed to flannel0; {@code flanneld_udp_kernel_path{path}}: 1 for the path peers'
 *       kernel datagrams take ({@code off}, {@code encap}, {@code gpe_trial}, {@code gpe}, {@code full}), 0 for the others</li>
 *   <li>{@code flanneld_peer_reachable{peer,subnet}}: 1 when the last probe round through the overlay to that
 *       peer passed, 0 when it failed (Ours, issue 12; absent before the first round and with probing off)</li>
 *   <li>{@code flanneld_peer_probe_rtt_seconds}: round-trip time of the small overlay probes that were answered</li>
 *   <li>{@code flanneld_peer_probe_failures_total{cause}}: failed probe rounds by cause (underlay_unreachable,
 *       stale_entries, overlay_blocked, mtu_black_hole)</li>
 *   <li>{@code flanneld_wireguard_peer_last_handshake_timestamp_seconds{device,public_key}}: when the last handshake
 *       with the peer completed (Unix time), 0 before the first (as {@code wg show} says 0);
 *       {@code flanneld_wireguard_peer_received_bytes_total{device,public_key}},
 *       {@code flanneld_wireguard_peer_sent_bytes_total{device,public_key}}: bytes from and to the peer (the UDP payload
 *       of its handshake, data and keepalive messages, as the kernel counts them; in kernel mode the kernel's count). Read at scrape time
 *       from the devices' current peers, so a removed peer's series are gone; a device whose kernel cannot be read
 *       is left out of that scrape and counted as an error {@code wireguard_stats}</li>
 * </ul>
 */
public final class Metrics {
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
    private final Gauge leases = Gauge.builder().name("flanneld_leases")
            .help("Other nodes' leases currently known").withoutExemplars().register(registry);
    private final Counter programmed = Counter.builder().name("flanneld_kernel_entries_programmed_total")
            .help("Kernel entries (neighbour, FDB, route) programmed by the backend").withoutExemplars().register(registry);
    private final Counter removed = Counter.builder().name("flanneld_kernel_entries_removed_total")
            .help("Kernel entries deleted for removed leases or as strays").withoutExemplars().register(registry);
    private final List<Runnable> scrapeHooks = new CopyOnWriteArrayList<>();
    private final Counter repairs = Counter.builder().name("flanneld_reconcile_repairs_total")
            .help("Kernel entries or rule sets repaired after drift, by kind").labelNames("kind").withoutExemplars()
            .register(registry);
    private final Histogram latency = Histogram.builder().name("flanneld_lease_event_programmed_seconds")
            .help("Time from a lease event's arrival to its kernel entries being programmed").unit(io.prometheus.metrics.model
                    .snapshots.Unit.SECONDS)
            .classicOnly().classicUpperBounds(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
            .withoutExemplars().register(registry);
    private final Counter errors = Counter.builder().name("flanneld_errors_total")
            .help("Errors, by kind").labelNames("kind").withoutExemplars().register(registry);

    private final Counter udpPackets = Counter.builder().name("flanneld_udp_packets_total")
            .help("Packets forwarded by the UDP backend, by direction (to_peers, from_peers)").labelNames("direction")
            .withoutExemplars().register(registry);
    private final Counter udpKernelPackets = Counter.builder().name("flanneld_udp_kernel_packets_total")
            .help("Packets the UDP backend's kernel datapath encapsulated (to_peers) or decapsulated (from_peers); "
                    + "a TCP super-packet counts once").labelNames("direction").withoutExemplars().register(registry);
    private final Counter udpKernelDrops = Counter.builder().name("flanneld_udp_kernel_dropped_packets_total")
            .help("Packets the UDP backend's kernel datapath dropped, by reason (rewrite_failed: a rewrite failed halfway; "
                    + "gpe_port: addressed to the VXLAN-GPE port from outside, or at its gate without our mark)")
            .labelNames("reason").withoutExemplars().register(registry);
    private final Counter udpKernelGpeDelivered = Counter.builder().name("flanneld_udp_kernel_gpe_delivered_packets_total")
            .help("Packets the UDP backend's VXLAN-GPE device handed to flannel0 (against flanneld_udp_kernel_packets_total"
                    + "{direction=\"from_peers\"}: whether that path delivers)").withoutExemplars().register(registry);
    private final Gauge udpKernelPath = Gauge.builder().name("flanneld_udp_kernel_path")
            .help("1 for the path peers' kernel datagrams take on this node (off, encap, gpe_trial, gpe, full), 0 for the others")
            .labelNames("path").withoutExemplars().register(registry);
    private final Counter udpDrops = Counter.builder().name("flanneld_udp_dropped_packets_total")
            .help("Packets dropped by the UDP backend, by reason").labelNames("reason").withoutExemplars().register(registry);

    private final Gauge peerReachable = Gauge.builder().name("flanneld_peer_reachable")
            .help("1 when the last probe round through the overlay to the peer passed, else 0").labelNames("peer", "subnet")
            .withoutExemplars().register(registry);
    private final Histogram probeRtt = Histogram.builder().name("flanneld_peer_probe_rtt_seconds")
            .help("Round-trip time of answered small probes through the overlay").unit(io.prometheus.metrics.model
                    .snapshots.Unit.SECONDS)
            .classicOnly().classicUpperBounds(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1)
            .withoutExemplars().register(registry);
    private final Counter probeFailures = Counter.builder().name("flanneld_peer_probe_failures_total")
            .help("Failed peer probe rounds, by cause").labelNames("cause").withoutExemplars().register(registry);

    /** One WireGuard peer as a scrape sees it: its device, its base64 key, its last handshake (Unix seconds, 0 never) and bytes each way. */
    public record WireguardPeerSample(String device, String publicKey, double lastHandshakeSeconds, double receivedBytes,
            double sentBytes) {
    }

    /** The peers the callbacks below report, set by a scrape hook before each scrape ({@link #setWireguardPeers}). */
    private volatile List<WireguardPeerSample> wireguardPeers = List.of();
    private final GaugeWithCallback wireguardHandshake = GaugeWithCallback.builder()
            .name("flanneld_wireguard_peer_last_handshake_timestamp_seconds")
            .help("When the last handshake with the WireGuard peer completed (Unix time), 0 before the first")
            .labelNames("device", "public_key")
            .callback(cb -> wireguardPeers.forEach(p -> cb.call(p.lastHandshakeSeconds(), p.device(), p.publicKey())))
            .register(registry);
    private final CounterWithCallback wireguardReceived = CounterWithCallback.builder()
            .name("flanneld_wireguard_peer_received_bytes_total")
            .help("Bytes received from the WireGuard peer (the UDP payload of its handshake, data and keepalive messages)")
            .labelNames("device", "public_key")
            .callback(cb -> wireguardPeers.forEach(p -> cb.call(p.receivedBytes(), p.device(), p.publicKey())))
            .register(registry);
    private final CounterWithCallback wireguardSent = CounterWithCallback.builder()
            .name("flanneld_wireguard_peer_sent_bytes_total")
            .help("Bytes sent to the WireGuard peer (the UDP payload of its handshake, data and keepalive messages)")
            .labelNames("device", "public_key")
            .callback(cb -> wireguardPeers.forEach(p -> cb.call(p.sentBytes(), p.device(), p.publicKey())))
            .register(registry);

    /** What the network-policy series read at scrape time ({@link #setNetworkPolicy}); absent without --network-policy. */
    public record NetworkPolicySample(int policies, int rejected, int localPods, int isolatedChains, long applies, long failures,
                                      double lastApplySeconds) {
    }

    private volatile java.util.function.Supplier<NetworkPolicySample> networkPolicy = null;
    /** Packets dropped per direction ({@code ingress}, {@code egress}); read once per scrape (it runs nft), empty when unknown. */
    private volatile java.util.function.Supplier<java.util.Map<String, Long>> networkPolicyDrops = java.util.Map::of;
    private final GaugeWithCallback netpolPolicies = GaugeWithCallback.builder()
            .name("flanneld_netpol_policies").help("NetworkPolicies enforced (state: enforced) or left out as not representable (state: rejected)")
            .labelNames("state")
            .callback(cb -> withNetworkPolicy(s -> {
                cb.call(s.policies(), "enforced");
                cb.call(s.rejected(), "rejected");
            })).register(registry);
    private final GaugeWithCallback netpolPods = GaugeWithCallback.builder()
            .name("flanneld_netpol_local_pods").help("This node's pods policies apply to (all), and the chains of isolated ones, a chain per pod and direction (isolated_chains)")
            .labelNames("what")
            .callback(cb -> withNetworkPolicy(s -> {
                cb.call(s.localPods(), "all");
                cb.call(s.isolatedChains(), "isolated_chains");
            })).register(registry);
    private final CounterWithCallback netpolApplies = CounterWithCallback.builder()
            .name("flanneld_netpol_table_loads_total").help("Loads of the nftables table inet jflannel-netpol (outcome: ok or failed)")
            .labelNames("outcome")
            .callback(cb -> withNetworkPolicy(s -> {
                cb.call(s.applies(), "ok");
                cb.call(s.failures(), "failed");
            })).register(registry);
    private final CounterWithCallback netpolDropped = CounterWithCallback.builder()
            .name("flanneld_netpol_dropped_packets_total").help("Packets the policies dropped, entering (ingress) or leaving (egress) this node's pods")
            .labelNames("direction")
            .callback(cb -> networkPolicyDrops.get().forEach((direction, packets) -> cb.call(packets, direction))).register(registry);
    private final GaugeWithCallback netpolLastApply = GaugeWithCallback.builder()
            .name("flanneld_netpol_last_load_seconds").help("Seconds the last successful load took, from the sync's start (compile, render, nft -f)")
            .callback(cb -> withNetworkPolicy(s -> cb.call(s.lastApplySeconds()))).register(registry);

    /** Turns the network-policy series on, read from {@code sample} and {@code drops} at each scrape. */
    /** The CNI fast path's requests (issue 37), read at scrape time; absent while it does not run. */
    private volatile java.util.function.Supplier<long[]> cniRequests = () -> null;
    private final CounterWithCallback cniRequestsTotal = CounterWithCallback.builder()
            .name("flanneld_cni_requests_total")
            .help("CNI plugin requests on the fast path's socket (outcome: served, fallback: told to run the plugin's own JVM, refused: peer not root)")
            .labelNames("outcome")
            .callback(cb -> {
                long[] c = cniRequests.get();
                if (c != null) {
                    cb.call(c[0], "served");
                    cb.call(c[1], "fallback");
                    cb.call(c[2], "refused");
                }
            }).register(registry);

    /** {@code counts} gives served, fallback, refused. */
    public void setCniFastPath(java.util.function.Supplier<long[]> counts) {
        cniRequests = counts;
    }

    public void setNetworkPolicy(java.util.function.Supplier<NetworkPolicySample> sample,
                                 java.util.function.Supplier<java.util.Map<String, Long>> drops) {
        networkPolicy = sample;
        networkPolicyDrops = drops;
    }

    private void withNetworkPolicy(java.util.function.Consumer<NetworkPolicySample> use) {
        java.util.function.Supplier<NetworkPolicySample> s = networkPolicy;
        if (s != null) {
            use.accept(s.get());
        }
    }

    /**
     * The WireGuard peers the next scrape shows, all devices' at once (a scrape hook reads them first): only these
     * have series, so a peer left out is gone from /metrics.
     */
    public void setWireguardPeers(List<WireguardPeerSample> peers) {
        wireguardPeers = List.copyOf(peers);
    }

    public void setPeerReachable(String peer, String subnet, boolean reachable) {
        peerReachable.labelValues(peer, subnet).set(reachable ? 1 : 0);
    }

    /**
     * The reachability series of one peer, to be set once per probe round without a label lookup
     * each time; it comes into being with this call (so call it when there is a first value), and a
     * consumer obtained before {@link #removePeer} no longer reaches /metrics after it.
     */
    public java.util.function.DoubleConsumer peerReachableSeries(String peer, String subnet) {
        return peerReachable.labelValues(peer, subnet)::set;
    }

    /** The failure counter of one cause, to count without a label lookup each time; created with this call. */
    public Runnable peerProbeFailureCounter(String cause) {
        return probeFailures.labelValues(cause)::inc;
    }

    /** A peer went away: its series goes too (no stale 0 for a node that left). */
    public void removePeer(String peer, String subnet) {
        peerReachable.remove(peer, subnet);
    }

    public void observePeerProbeRtt(double seconds) {
        probeRtt.observe(seconds);
    }

    public void peerProbeFailure(String cause) {
        probeFailures.labelValues(cause).inc();
    }

    public void addUdpPackets(String direction, long count) {
        if (count > 0) {
            udpPackets.labelValues(direction).inc(count);
        }
    }

    public void addUdpKernelPackets(String direction, long count) {
        if (count > 0) {
            udpKernelPackets.labelValues(direction).inc(count);
        }
    }

    public void addUdpKernelDrops(String reason, long count) {
        if (count > 0) {
            udpKernelDrops.labelValues(reason).inc(count);
        }
    }

    public void addUdpKernelGpeDelivered(long count) {
        if (count > 0) {
            udpKernelGpeDelivered.inc(count);
        }
    }

    /** {@code current} 1 and every other of {@code paths} 0. */
    public void setUdpKernelPath(List<String> paths, String current) {
        for (String p : paths) {
            udpKernelPath.labelValues(p).set(p.equals(current) ? 1 : 0);
        }
    }

    public void addUdpDrops(String reason, long count) {
        if (count > 0) {
            udpDrops.labelValues(reason).inc(count);
        }
    }

    public void setLeases(long count) {
        leases.set(count);
    }

    public void addKernelEntriesProgrammed(long count) {
        if (count > 0) {
            programmed.inc(count);
        }
    }

    public void addKernelEntriesRemoved(long count) {
        if (count > 0) {
            removed.inc(count);
        }
    }

    /** Runs before every scrape: a bridge copies a backend's own counters in (as deltas). */
    public void addScrapeHook(Runnable hook) {
        scrapeHooks.add(hook);
    }

    public void addRepairs(String kind, long count) {
        if (count > 0) {
            repairs.labelValues(kind).inc(count);
        }
    }

    public void observeProgrammedSeconds(double seconds) {
        latency.observe(seconds);
    }

    public void error(String kind) {
        errors.labelValues(kind).inc();
    }

    public void addErrors(String kind, long count) {
        if (count > 0) {
            errors.labelValues(kind).inc(count);
        }
    }

    /** Prometheus text format 0.0.4. */
    public void writeText(OutputStream out) throws IOException {
        scrapeHooks.forEach(Runnable::run);
        writer.write(out, registry.scrape());
    }

    public String contentType() {
        return writer.getContentType();
    }
}
