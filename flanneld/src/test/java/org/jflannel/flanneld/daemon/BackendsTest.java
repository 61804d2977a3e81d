package org.jflannel.flanneld.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.Inet4Address;
import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.util.List;
import java.nio.charset.StandardCharsets;
import org.jflannel.backend.extension.AllocBackend;
import org.jflannel.backend.extension.ExtensionBackend;
import org.jflannel.backend.hostgw.HostGwBackend;
import org.jflannel.backend.udp.UdpCounters;
import org.jflannel.backend.udp.UdpNetwork;
import org.jflannel.core.ExternalInterface;
import org.jflannel.flanneld.health.Metrics;
import org.junit.jupiter.api.Test;

class BackendsTest {

    static Inet4Address ip(String literal) throws Exception {
        return (Inet4Address) InetAddress.getByName(literal);
    }

    @Test
    void hostGwIsWired() throws Exception {
        ExternalInterface ext = new ExternalInterface("eth0", 2, 1500, ip("192.0.2.11"), null, null, null);

        assertThat(Backends.create("host-gw", ext, null, Runnable::run)).isInstanceOf(HostGwBackend.class);
    }

    @Test
    void allocAndExtensionAreWired() throws Exception {
        ExternalInterface ext = new ExternalInterface("eth0", 2, 1500, ip("192.0.2.11"), null, null, null);

        assertThat(Backends.create("alloc", ext, null, Runnable::run)).isInstanceOf(AllocBackend.class);
        assertThat(Backends.create("extension", ext, null, Runnable::run)).isInstanceOf(ExtensionBackend.class);
    }

    @Test
    void ipipIsWired() throws Exception {
        ExternalInterface ext = new ExternalInterface("eth0", 2, 1500, ip("192.0.2.11"), null, null, null);

        assertThat(Backends.create("ipip", ext, null, Runnable::run)).isInstanceOf(org.jflannel.backend.ipip.IpipBackend.class);
    }

    @Test
    void wireguardIsWired() throws Exception {
        ExternalInterface ext = new ExternalInterface("eth0", 2, 1500, ip("192.0.2.11"), null, null, null);

        assertThat(Backends.create("wireguard", ext, null, Runnable::run))
                .isInstanceOf(org.jflannel.backend.wireguard.WireguardBackend.class);
    }

    @Test
    void ipsecIsWired() throws Exception {
        ExternalInterface ext = new ExternalInterface("eth0", 2, 1500, ip("192.0.2.11"), null, null, null);

        assertThat(Backends.create("ipsec", ext, null, Runnable::run))
                .isInstanceOf(org.jflannel.backend.ipsec.IpsecBackend.class);
    }

    /** Every drop reason the userspace WireGuard counts reaches /metrics, summed over its devices (issue 38). */
    @Test
    void everyWireguardDropReasonIsExported() throws Exception {
        var v4 = new org.jflannel.backend.wireguard.protocol.Counters();
        var v6 = new org.jflannel.backend.wireguard.protocol.Counters();
        var metrics = new org.jflannel.flanneld.health.Metrics();
        Backends.bridgeWireguardDrops(() -> List.of(v4, v6), metrics);
        v4.droppedMalformed.add(3);
        v6.droppedMalformed.add(1);
        v4.droppedNoPeer.add(2);
        v6.droppedStaleKeys.add(5);
        v4.droppedReplay.add(7);

        var out = new java.io.ByteArrayOutputStream();
        metrics.writeText(out);
        metrics.writeText(new java.io.ByteArrayOutputStream()); // a second scrape adds nothing
        var again = new java.io.ByteArrayOutputStream();
        metrics.writeText(again);

        for (String text : List.of(out.toString(java.nio.charset.StandardCharsets.UTF_8),
                again.toString(java.nio.charset.StandardCharsets.UTF_8))) {
            assertThat(text).contains("flanneld_errors_total{kind=\"wireguard_malformed\"} 4.0")
                    .contains("flanneld_errors_total{kind=\"wireguard_no_peer\"} 2.0")
                    .contains("flanneld_errors_total{kind=\"wireguard_stale_keys\"} 5.0")
                    .contains("flanneld_errors_total{kind=\"wireguard_replay\"} 7.0");
        }
    }

    @Test
    void hostGwBehindNatStopsStartUpWithUpstreamsMessage() throws Exception {
        ExternalInterface nat = new ExternalInterface("eth0", 2, 1500, ip("192.0.2.11"), null, ip("203.0.113.5"), null);

        assertThatThrownBy(() -> Backends.create("host-gw", nat, null, Runnable::run)).isInstanceOf(StartupError.class)
                .hasMessage("Error fetching backend: your PublicIP differs from interface IP, meaning that probably "
                        + "you're on a NAT, which is not supported by host-gw backend");
    }

    /** A UDP network whose counters the test sets. */
    static final class FakeUdp implements Backends.UdpSource {
        final UdpCounters counters = new UdpCounters();
        volatile UdpNetwork.KernelCounts kernel = new UdpNetwork.KernelCounts(0, 0, 0, 0, 0);
        volatile String path = "off";

        @Override
        public UdpCounters counters() {
            return counters;
        }

        @Override
        public UdpNetwork.KernelCounts kernelCounts() {
            return kernel;
        }

        @Override
        public String kernelPath() {
            return path;
        }
    }

    static String scrape(Metrics metrics) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        metrics.writeText(out);
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theUdpScrapeHookCopiesTheKernelDatapathsCountersAsDeltasAndItsPath() throws Exception {
        Metrics metrics = new Metrics();
        FakeUdp udp = new FakeUdp();
        metrics.addScrapeHook(Backends.udpScrapeHook(udp, metrics));
        udp.kernel = new UdpNetwork.KernelCounts(10, 20, 3, 4, 19);
        udp.path = "gpe_trial";
        assertThat(scrape(metrics)).contains(
                "flanneld_udp_kernel_packets_total{direction=\"to_peers\"} 10.0",
                "flanneld_udp_kernel_packets_total{direction=\"from_peers\"} 20.0",
                "flanneld_udp_kernel_dropped_packets_total{reason=\"rewrite_failed\"} 3.0",
                "flanneld_udp_kernel_dropped_packets_total{reason=\"gpe_port\"} 4.0",
                "flanneld_udp_kernel_gpe_delivered_packets_total 19.0",
                "flanneld_udp_kernel_path{path=\"gpe_trial\"} 1.0",
                "flanneld_udp_kernel_path{path=\"gpe\"} 0.0",
                "flanneld_udp_kernel_path{path=\"encap\"} 0.0",
                "flanneld_udp_kernel_path{path=\"off\"} 0.0",
                "flanneld_udp_kernel_path{path=\"full\"} 0.0");

        // the next scrape adds what grew; an unreadable slot (-1) adds nothing and is not taken as the new base
        udp.kernel = new UdpNetwork.KernelCounts(15, -1, 3, 6, 40);
        udp.path = "encap";
        String second = scrape(metrics);
        assertThat(second).contains(
                "flanneld_udp_kernel_packets_total{direction=\"to_peers\"} 15.0",
                "flanneld_udp_kernel_packets_total{direction=\"from_peers\"} 20.0",
                "flanneld_udp_kernel_dropped_packets_total{reason=\"rewrite_failed\"} 3.0",
                "flanneld_udp_kernel_dropped_packets_total{reason=\"gpe_port\"} 6.0",
                "flanneld_udp_kernel_gpe_delivered_packets_total 40.0",
                "flanneld_udp_kernel_path{path=\"encap\"} 1.0",
                "flanneld_udp_kernel_path{path=\"gpe_trial\"} 0.0");
        udp.kernel = new UdpNetwork.KernelCounts(15, 25, 3, 6, 40);
        assertThat(scrape(metrics)).contains("flanneld_udp_kernel_packets_total{direction=\"from_peers\"} 25.0");
    }

    @Test
    void everyKernelPathTheUdpNetworkCanReportIsAGaugeLabel() throws Exception {
        Metrics metrics = new Metrics();
        FakeUdp udp = new FakeUdp();
        metrics.addScrapeHook(Backends.udpScrapeHook(udp, metrics));
        for (String p : UdpNetwork.KERNEL_PATHS) {
            udp.path = p;
            String body = scrape(metrics);
            assertThat(body).contains("flanneld_udp_kernel_path{path=\"" + p + "\"} 1.0");
            assertThat(body.lines().filter(l -> l.startsWith("flanneld_udp_kernel_path{") && l.endsWith(" 1.0"))).hasSize(1);
        }
    }
}
