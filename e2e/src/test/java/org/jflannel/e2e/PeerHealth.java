package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.Wait;

/** Reading a node's /peers (issue 12) in the cluster tests: bounded waits on a verdict, and /metrics agreeing with it. */
final class PeerHealth {
    static final ObjectMapper JSON = new ObjectMapper();

    private PeerHealth() {
    }

    static JsonNode awaitPeer(ClusterNode on, ClusterNode peer, String verdict, Duration within) throws Exception {
        return Wait.until(on.name() + " reports " + peer.name() + " " + verdict, within, () -> peer(on, peer),
                p -> p != null && verdict.equals(verdict(p)));
    }

    static void awaitEveryPeer(ClusterNode on, int peers, String verdict, Duration within) throws Exception {
        Wait.until(on.name() + " reports every peer " + verdict, within, () -> JSON.readTree(on.peers()).get("peers"),
                ps -> ps.size() == peers && allMatch(ps, verdict));
    }

    private static boolean allMatch(JsonNode peers, String verdict) {
        for (JsonNode p : peers) {
            if (!verdict.equals(verdict(p))) {
                return false;
            }
        }
        return true;
    }

    /** {@code reachable}, {@code unknown} or the cause. */
    private static String verdict(JsonNode p) {
        return p.get("state").asText().equals("unreachable") ? p.get("cause").asText() : p.get("state").asText();
    }

    static JsonNode peer(ClusterNode on, ClusterNode peer) throws Exception {
        String ip = peer.publicIp().getHostAddress();
        for (JsonNode p : JSON.readTree(on.peers()).get("peers")) {
            if (p.get("peer").asText().equals(ip)) {
                return p;
            }
        }
        return null;
    }

    /** Every peer /peers lists as reachable is 1 in flanneld_peer_reachable, every unreachable one 0. */
    static void assertMetricsAgree(ClusterNode n) throws Exception {
        for (JsonNode p : JSON.readTree(n.peers()).get("peers")) {
            String state = p.get("state").asText();
            if (state.equals("unknown")) {
                continue;
            }
            String sample = "flanneld_peer_reachable{peer=\"" + p.get("peer").asText() + "\",subnet=\""
                    + p.get("subnet").asText() + "\"}";
            assertThat(n.metric(sample)).as("%s on %s (/peers: %s)", sample, n.name(), state)
                    .isEqualTo(state.equals("reachable") ? 1.0 : 0.0);
        }
    }

}
