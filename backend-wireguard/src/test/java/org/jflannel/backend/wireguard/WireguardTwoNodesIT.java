package org.jflannel.backend.wireguard;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jflannel.backend.wireguard.protocol.Timings;
import org.jflannel.core.LeaseEvent;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two of our wireguard networks in two namespaces: upstream's device and route on each side, the
 * first packet of each direction carried (staged behind the handshake, not lost), both nodes
 * sending first at the same moment (crossed initiations), a checked TCP stream both ways, the
 * device gone after close.
 */
@Tag("netns")
class WireguardTwoNodesIT {
    private static final String CONF = "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"wireguard\"}}";

    @TempDir
    Path tmp;

    @Test
    void firstPacketsBothWaysAtOnceThenTcpAndCleanClose() throws Exception {
        try (WgNode a = WgNode.create("wta"); WgNode b = WgNode.create("wtb")) {
            WgNode.join(a, b, "10.244.1.1/24", "10.244.2.1/24");
            WireguardNetwork na = a.register(CONF, "10.244.1.0/24", "ul0", "192.0.2.1", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("a").toString()), Timings.standard());
            WireguardNetwork nb = b.register(CONF, "10.244.2.0/24", "ul0", "192.0.2.2", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("b").toString()), Timings.standard());
            na.apply(List.of(LeaseEvent.added(WireguardGoInteropIT.lease("10.244.2.0/24", "192.0.2.2", nb.publicKey()))));
            nb.apply(List.of(LeaseEvent.added(WireguardGoInteropIT.lease("10.244.1.0/24", "192.0.2.1", na.publicKey()))));

            assertThat(a.ip("-4", "-o", "addr", "show", "dev", "flannel-wg")).contains("10.244.1.0/32");
            assertThat(a.ip("route", "show", "10.244.0.0/16")).contains("dev flannel-wg");
            assertThat(a.ip("link", "show", "flannel-wg")).contains("mtu 1420");

            CompletableFuture<String> ab = CompletableFuture.supplyAsync(() -> ping(a, "10.244.1.1", "10.244.2.1"));
            CompletableFuture<String> ba = CompletableFuture.supplyAsync(() -> ping(b, "10.244.2.1", "10.244.1.1"));
            String pa = ab.get();
            String pb = ba.get();
            System.out.println("a->b: " + pa + "\nb->a: " + pb + "\na: " + na.counters() + "\nb: " + nb.counters());
            assertThat(pa).as("a->b first echo (single ping, 2 s)").contains("1 received");
            assertThat(pb).as("b->a first echo (single ping, 2 s)").contains("1 received");

            WgNode.tcpTransferCrc(a, b, "10.244.2.1", 8 << 20);
            WgNode.tcpTransferCrc(b, a, "10.244.1.1", 8 << 20);

            na.close();
            assertThat(a.execAnyExit("ip", "link", "show", "flannel-wg")).contains("does not exist");
        }
    }

    private static String ping(WgNode n, String from, String to) {
        try {
            return n.execAnyExit("ping", "-n", "-c", "1", "-W", "2", "-I", from, to);
        } catch (Exception e) {
            return e.toString();
        }
    }
}
