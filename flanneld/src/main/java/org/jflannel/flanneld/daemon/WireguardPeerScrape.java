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
 * logged (one line naming it and the error), counted as an error {@code wireguard_stats} and left out of that
 * scrape; the other devices and the rest of /metrics are served as usual.
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
    public void run() {
        List<Metrics.WireguardPeerSample> samples = new ArrayList<>();
        for (String device : source.deviceNames()) {
            try {
                for (PeerStats p : source.peerStats(device)) {
                    samples.add(new Metrics.WireguardPeerSample(device, p.publicKey(), p.lastHandshakeEpochNanos() / 1e9,
                            unsigned(p.rxBytes()), unsigned(p.txBytes())));
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("wireguard peer stats unreadable dev={} error={}", device, e instanceof IOException ? e.getMessage() : e.toString());
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
