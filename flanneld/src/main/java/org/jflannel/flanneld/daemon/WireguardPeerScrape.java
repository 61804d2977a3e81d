package org.jflannel.flanneld.daemon;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.backend.wireguard.PeerStats;
import org.jflannel.backend.wireguard.WireguardNetwork;
import org.jflannel.flanneld.health.Metrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scrape hook of the WireGuard per-peer series: before each scrape, every device's peers read now (in kernel
 * mode one {@code WG_CMD_GET_DEVICE} dump per device, in userspace our protocol's counters) and handed to
 * {@link Metrics#setWireguardPeers}, so the series follow the current peers. A device that cannot be read is
 * counted as an error {@code wireguard_stats} at every scrape and left out of it; the other devices and the rest
 * of /metrics are served as usual. It is logged when it starts failing or fails differently (one line naming it
 * and the error), and once when it can be read again: a scraper every 15 s would otherwise write the same line
 * four times a minute for as long as it lasts.
 */
final class WireguardPeerScrape implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(WireguardPeerScrape.class);

    /** What the hook reads: a wireguard network's devices and their peers' stats. */
    interface Source {
        List<String> deviceNames();

        List<PeerStats> peerStats(String device) throws IOException;
    }

    private final Source source;
    private final Metrics metrics;
    /** The devices failing now, with their last error (scrapes may overlap: guarded by this). */
    private final java.util.Map<String, String> failing = new java.util.HashMap<>();

    WireguardPeerScrape(Source source, Metrics metrics) {
        this.source = source;
        this.metrics = metrics;
    }

    static WireguardPeerScrape of(WireguardNetwork network, Metrics metrics) {
        return new WireguardPeerScrape(new Source() {
            @Override
            public List<String> deviceNames() {
                return network.deviceNames();
            }

            @Override
            public List<PeerStats> peerStats(String device) throws IOException {
                return network.peerStats(device);
            }
        }, metrics);
    }

    @Override
    public synchronized void run() {
        List<Metrics.WireguardPeerSample> samples = new ArrayList<>();
        for (String device : source.deviceNames()) {
            try {
                List<PeerStats> peers = source.peerStats(device);
                for (PeerStats p : peers) {
                    samples.add(new Metrics.WireguardPeerSample(device, p.publicKey(), p.lastHandshakeEpochNanos() / 1e9,
                            unsigned(p.rxBytes()), unsigned(p.txBytes())));
                }
                if (failing.remove(device) != null) {
                    LOG.info("wireguard peer stats readable again dev={} peers={}", device, peers.size());
                }
            } catch (IOException | RuntimeException e) {
                String error = e instanceof IOException ? e.getMessage() : e.toString();
                if (!error.equals(failing.put(device, error))) {
                    LOG.warn("wireguard peer stats unreadable dev={} error={}", device, error);
                }
                metrics.error("wireguard_stats");
            }
        }
        metrics.setWireguardPeers(samples);
    }

    /** The kernel's counters are u64. */
    private static double unsigned(long v) {
        return v >= 0 ? v : v + 0x1p64;
    }
}
