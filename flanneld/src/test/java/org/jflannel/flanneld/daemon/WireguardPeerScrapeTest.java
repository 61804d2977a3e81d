package org.jflannel.flanneld.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jflannel.backend.wireguard.PeerStats;
import org.jflannel.backend.wireguard.protocol.Endpoint;
import org.jflannel.flanneld.health.Metrics;
import org.jflannel.linuxnet.NetlinkException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The WireGuard per-peer series as /metrics serves them (the text {@link Metrics#writeText} writes for the
 * endpoint): one series per current peer and device, read at scrape time, a removed peer's gone at the next
 * scrape; a device whose kernel cannot be read logged when it starts failing, fails differently and recovers,
 * counted as {@code wireguard_stats} at every scrape, and the rest of the page served.
 */
class WireguardPeerScrapeTest {
    private static final String KEY_B = key(0xb0);
    private static final String KEY_C = key(0xc0);
    private static final String KEY_D = key(0xd0);

    private final Metrics metrics = new Metrics();
    private final FakeDevices devices = new FakeDevices();
    private final Logger log = (Logger) LoggerFactory.getLogger(WireguardPeerScrape.class);
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();

    /** Devices whose peers the test sets; a device mapped to an exception fails to be read. */
    static final class FakeDevices implements WireguardPeerScrape.Source {
        final Map<String, Object> peers = new ConcurrentHashMap<>();

        @Override
        public List<String> deviceNames() {
            return List.of("flannel-wg", "flannel-wg-v6");
        }

        @Override
        @SuppressWarnings("unchecked")
        public List<PeerStats> peerStats(String device) throws IOException {
            Object p = peers.getOrDefault(device, List.of());
            if (p instanceof IOException e) {
                throw e;
            }
            return (List<PeerStats>) p;
        }
    }

    @AfterEach
    void detach() {
        log.detachAppender(logged);
    }

    @Test
    void eachCurrentPeerHasItsSeriesAndARemovedPeersGoAtTheNextScrape() throws Exception {
        metrics.addScrapeHook(new WireguardPeerScrape(devices, metrics));
        devices.peers.put("flannel-wg", List.of(
                new PeerStats(KEY_B, new Endpoint(0xc0000202, 51820), 1_764_400_000_500_000_000L, 123_456, 654_321),
                new PeerStats(KEY_C, null, PeerStats.NEVER, 0, 148)));
        devices.peers.put("flannel-wg-v6", List.of(new PeerStats(KEY_D, null, 1_764_400_100_000_000_000L, 7, 8)));

        String page = scrape();
        assertThat(page).contains(
                "flanneld_wireguard_peer_last_handshake_timestamp_seconds{device=\"flannel-wg\",public_key=\"" + KEY_B + "\"} 1.7644000005E9",
                "flanneld_wireguard_peer_received_bytes_total{device=\"flannel-wg\",public_key=\"" + KEY_B + "\"} 123456.0",
                "flanneld_wireguard_peer_sent_bytes_total{device=\"flannel-wg\",public_key=\"" + KEY_B + "\"} 654321.0",
                "flanneld_wireguard_peer_last_handshake_timestamp_seconds{device=\"flannel-wg\",public_key=\"" + KEY_C + "\"} 0.0",
                "flanneld_wireguard_peer_sent_bytes_total{device=\"flannel-wg\",public_key=\"" + KEY_C + "\"} 148.0",
                "flanneld_wireguard_peer_received_bytes_total{device=\"flannel-wg-v6\",public_key=\"" + KEY_D + "\"} 7.0",
                "# TYPE flanneld_wireguard_peer_received_bytes_total counter",
                "# TYPE flanneld_wireguard_peer_last_handshake_timestamp_seconds gauge");

        devices.peers.put("flannel-wg", List.of(new PeerStats(KEY_B, null, 1_764_400_000_500_000_000L, 200_000, 700_000)));
        String next = scrape();
        assertThat(next).doesNotContain(KEY_C)
                .contains("flanneld_wireguard_peer_received_bytes_total{device=\"flannel-wg\",public_key=\"" + KEY_B + "\"} 200000.0");
    }

    @Test
    void aDeviceThatCannotBeReadIsLoggedCountedAndLeftOutWhileTheRestIsServed() throws Exception {
        logged.start();
        log.addAppender(logged);
        metrics.addScrapeHook(new WireguardPeerScrape(devices, metrics));
        metrics.setLeases(2);
        devices.peers.put("flannel-wg", new NetlinkException("WG_CMD_GET_DEVICE", "flannel-wg", 19, ""));
        devices.peers.put("flannel-wg-v6", List.of(new PeerStats(KEY_D, null, PeerStats.NEVER, 1, 2)));

        String page = scrape();
        assertThat(page).contains("flanneld_errors_total{kind=\"wireguard_stats\"} 1.0", "flanneld_leases 2.0",
                "flanneld_wireguard_peer_sent_bytes_total{device=\"flannel-wg-v6\",public_key=\"" + KEY_D + "\"} 2.0");
        assertThat(page).doesNotContain("device=\"flannel-wg\"");
        assertThat(logged.list).singleElement().satisfies(e -> assertThat(e.getFormattedMessage())
                .isEqualTo("wireguard peer stats unreadable dev=flannel-wg error=WG_CMD_GET_DEVICE flannel-wg: ENODEV (19)"));

        scrape();
        assertThat(scrape()).contains("flanneld_errors_total{kind=\"wireguard_stats\"} 3.0");
        assertThat(logged.list).as("the same failure logged once, counted at every scrape").hasSize(1);

        devices.peers.put("flannel-wg", new NetlinkException("WG_CMD_GET_DEVICE", "flannel-wg", 1, ""));
        scrape();
        assertThat(logged.list).as("a different error is logged").hasSize(2);
        assertThat(logged.list.get(1).getFormattedMessage()).endsWith("error=WG_CMD_GET_DEVICE flannel-wg: EPERM (1)");

        devices.peers.put("flannel-wg", List.of(new PeerStats(KEY_B, null, PeerStats.NEVER, 3, 4)));
        assertThat(scrape()).contains("flanneld_wireguard_peer_sent_bytes_total{device=\"flannel-wg\",public_key=\"" + KEY_B + "\"} 4.0")
                .contains("flanneld_errors_total{kind=\"wireguard_stats\"} 4.0");
        assertThat(logged.list).hasSize(3);
        assertThat(logged.list.get(2).getFormattedMessage()).isEqualTo("wireguard peer stats readable again dev=flannel-wg peers=1");
        scrape();
        assertThat(logged.list).as("recovery logged once").hasSize(3);
    }

    private String scrape() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        metrics.writeText(out);
        return out.toString(StandardCharsets.UTF_8);
    }

    private static String key(int b) {
        byte[] k = new byte[32];
        Arrays.fill(k, (byte) b);
        return Base64.getEncoder().encodeToString(k);
    }
}
