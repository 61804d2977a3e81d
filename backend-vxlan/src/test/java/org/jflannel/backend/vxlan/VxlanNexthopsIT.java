package org.jflannel.backend.vxlan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.linuxnet.netlink.Neighbour;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Ours (issue 23, {@code JFLANNEL_ROUTE_NEXTHOPS}, on by default): IPv4 peer routes through nexthop objects on the real kernel —
 * written in bulk, found again after a restart without a rewrite, removed with their nexthop, and taken over from
 * and handed back to plain routes (upstream flanneld's, which iproute2's {@code ip route replace ... onlink} writes
 * byte for byte, REFERENCE §6.7) without one kernel deletion on the way.
 */
@Tag("netns")
class VxlanNexthopsIT {
    private static final int PEERS = 300;

    @Test
    void routesGoThroughNexthopsSurviveARestartUnwrittenAndGoWithTheirLease() throws Exception {
        try (Node node = Node.withUnderlay("vxn", VxlanPeersIT.ADDR)) {
            node.settings = node.settings.withRouteNexthops(true);
            var ext = node.underlay("ul0", VxlanPeersIT.ADDR);
            node.register("", "10.244.1.0/24", ext, null);
            LeaseEvent[] batch = peers();
            node.apply(batch);

            assertThat(counts(node)).containsExactly(PEERS, PEERS, PEERS, PEERS);
            assertThat(node.ip("route", "show", "10.100.1.0/24")).contains("nhid 174326016").contains("via 10.100.1.0")
                    .contains("dev flannel.1").contains("onlink");
            assertThat(node.ip("nexthop", "show", "id", "174326016")).contains("via 10.100.1.0 dev flannel.1").contains("onlink");

            List<String> deleted = node.deletionsDuring(() -> {
                node.onLeaseEvents(() -> {
                    node.network.close(); // as a SIGKILL leaves it
                    return null;
                });
                node.register("", "10.244.1.0/24", ext, null);
                node.apply(batch);
                node.reconcile();
                return null;
            });
            assertThat(deleted).as("kernel deletions during the restart").isEmpty();
            assertThat(node.network.counters().entriesProgrammed()).as("entries re-written").isZero();
            assertThat(counts(node)).containsExactly(PEERS, PEERS, PEERS, PEERS);

            node.apply(LeaseEvent.removed(peer(1)));
            assertThat(counts(node)).containsExactly(PEERS - 1, PEERS - 1, PEERS - 1, PEERS - 1);
            assertThat(node.ip("route", "show", "10.100.1.0/24")).isBlank();
            assertThat(node.ip("nexthop", "show", "dev", "flannel.1")).doesNotContain("174326016");
        }
    }

    @Test
    void takingOverPlainRoutesAndHandingThemBackDeletesNothingAndLeavesNoNexthopBehind() throws Exception {
        try (Node node = Node.withUnderlay("vxt", VxlanPeersIT.ADDR)) {
            var ext = node.underlay("ul0", VxlanPeersIT.ADDR);
            node.settings = node.settings.withRouteNexthops(false); // JFLANNEL_ROUTE_NEXTHOPS=0
            node.register("", "10.244.1.0/24", ext, null); // plain routes, as upstream flanneld writes them
            LeaseEvent[] batch = peers();
            node.apply(batch);
            assertThat(counts(node)).containsExactly(PEERS, PEERS, PEERS, 0);

            List<String> deleted = node.deletionsDuring(() -> {
                node.onLeaseEvents(() -> {
                    node.network.close();
                    return null;
                });
                node.settings = node.settings.withRouteNexthops(true);
                node.register("", "10.244.1.0/24", ext, null);
                node.apply(batch);
                node.reconcile();
                return null;
            });
            assertThat(deleted).as("kernel deletions while taking over").isEmpty();
            assertThat(counts(node)).containsExactly(PEERS, PEERS, PEERS, PEERS);
            // each peer whose route was plain written once more, as a whole (replaces: neighbour and FDB unchanged)
            assertThat(node.network.counters().entriesProgrammed()).as("entries written").isEqualTo(3L * PEERS);

            // back to upstream: its RouteReplace of every lease's route at start, then a lease removed (RouteDel
            // naming gateway and device, which would not match a route with nhid)
            node.onLeaseEvents(() -> {
                node.network.close();
                return null;
            });
            for (int i = 0; i < PEERS; i++) {
                String sn = subnet(i);
                node.ip("route", "replace", sn + ".0/24", "via", sn + ".0", "dev", "flannel.1", "onlink");
            }
            node.ip("route", "del", subnet(7) + ".0/24", "via", subnet(7) + ".0", "dev", "flannel.1", "onlink");
            assertThat(node.ip("route", "show", "dev", "flannel.1")).doesNotContain("nhid");

            // and ours again, plain: the nexthops upstream left behind are removed once the leases are known
            node.settings = node.settings.withRouteNexthops(false);
            node.register("", "10.244.1.0/24", ext, null);
            node.apply(batch);
            node.reconcile();
            assertThat(counts(node)).containsExactly(PEERS, PEERS, PEERS, 0);
            assertThat(node.ip("nexthop", "show")).isBlank();
        }
    }

    private static String subnet(int i) {
        return "10." + (100 + (i >> 8)) + "." + (i & 255);
    }

    private static Lease peer(int i) {
        return Leases.v4(subnet(i) + ".0/24", "172.16." + (i >> 8) + "." + (i & 255),
                String.format("0e:00:00:00:%02x:%02x", i >> 8, i & 255));
    }

    private static LeaseEvent[] peers() {
        List<LeaseEvent> batch = new ArrayList<>();
        for (int i = 0; i < PEERS; i++) {
            batch.add(LeaseEvent.added(peer(i)));
        }
        return batch.toArray(LeaseEvent[]::new);
    }

    /** Permanent neighbours, FDB entries, onlink routes and routes through a nexthop on flannel.1 (our dumps). */
    private static List<Integer> counts(Node node) throws Exception {
        return node.onLeaseEvents(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                int idx = nl.link("flannel.1").orElseThrow().index();
                List<Route> routes = nl.routesOf(idx);
                return List.of(
                        (int) nl.neighbours(idx).stream().filter(n -> n.state() == Neighbour.NUD_PERMANENT).count(),
                        (int) nl.fdb(idx).stream().filter(f -> f.mac().value() != 0).count(),
                        (int) routes.stream().filter(Route::onlink).count(),
                        (int) routes.stream().filter(r -> r.nexthopId() != 0).count());
            }
        });
    }
}
