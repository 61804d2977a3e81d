package org.jflannel.backend.vxlan;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.linuxnet.netlink.Neighbour;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Large batches go through the pipelined path (BulkWriter); the kernel must end up as with the per-peer path. */
@Tag("netns")
class VxlanBulkIT {
    private static final int PEERS = 1000;

    @Test
    void aThousandPeersInOneBatchAllGetTheirEntries() throws Exception {
        try (Node node = Node.withUnderlay("vxb", VxlanPeersIT.ADDR)) {
            node.register("", "10.244.1.0/24", node.underlay("ul0", VxlanPeersIT.ADDR), null);
            List<LeaseEvent> batch = new ArrayList<>();
            for (int i = 0; i < PEERS; i++) {
                batch.add(LeaseEvent.added(peer(i, "0e:00:00:00:%02x:%02x")));
            }
            node.apply(batch.toArray(LeaseEvent[]::new));

            assertThat(counts(node)).containsExactly(PEERS, PEERS, PEERS);
            assertThat(node.ip("route", "show", "dev", "flannel.1").lines().filter(l -> l.contains("onlink"))).hasSize(PEERS);
            assertThat(node.onLeaseEvents(() -> node.network.peers())).isEqualTo(PEERS);
            assertThat(node.network.counters().entriesProgrammed()).isEqualTo(3L * PEERS);
        }
    }

    @Test
    void removalsAndChangedPeersInsideALargeBatchKeepTheirOrder() throws Exception {
        try (Node node = Node.withUnderlay("vxb", VxlanPeersIT.ADDR)) {
            node.register("", "10.244.1.0/24", node.underlay("ul0", VxlanPeersIT.ADDR), null);
            List<LeaseEvent> batch = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                batch.add(LeaseEvent.added(peer(i, "0e:00:00:00:%02x:%02x")));
            }
            batch.add(LeaseEvent.removed(peer(3, "0e:00:00:00:%02x:%02x")));     // added above, gone again
            batch.add(LeaseEvent.added(peer(5, "0e:00:00:11:%02x:%02x")));       // came back with a new MAC
            batch.add(LeaseEvent.added(peer(20, "0e:00:00:00:%02x:%02x")));
            node.apply(batch.toArray(LeaseEvent[]::new));

            assertThat(counts(node)).containsExactly(20, 20, 20);
            String neigh = node.ip("neigh", "show", "dev", "flannel.1");
            assertThat(neigh).doesNotContain("10.100.3.0 ").contains("10.100.5.0 lladdr 0e:00:00:11:00:05")
                    .doesNotContain("0e:00:00:00:00:05");
            assertThat(node.bridge("fdb", "show", "dev", "flannel.1")).doesNotContain("0e:00:00:00:00:05")
                    .contains("0e:00:00:11:00:05 dst 172.16.0.5");
            assertThat(node.ip("route", "show", "dev", "flannel.1")).doesNotContain("10.100.3.0/24");
        }
    }

    @Test
    void aPeerWhoseRouteFailsInTheBatchGetsThePerPeerRetriesAndRollback() throws Exception {
        try (Node node = Node.withUnderlay("vxb", VxlanPeersIT.ADDR)) {
            node.register("", "10.244.1.0/24", node.underlay("ul0", VxlanPeersIT.ADDR), null);
            List<LeaseEvent> batch = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                batch.add(LeaseEvent.added(peer(i, "0e:00:00:00:%02x:%02x")));
                if (i == 10) {
                    // the kernel takes neighbour and FDB entries for 224.0.0.0 but refuses a multicast gateway
                    batch.add(LeaseEvent.added(Leases.v4("224.0.0.0/24", "198.51.100.9", "0e:00:00:00:ff:09")));
                }
            }
            node.apply(batch.toArray(LeaseEvent[]::new));

            assertThat(counts(node)).containsExactly(20, 20, 20);
            assertThat(node.ip("neigh", "show", "dev", "flannel.1")).doesNotContain("224.0.0.0");
            assertThat(node.bridge("fdb", "show", "dev", "flannel.1")).doesNotContain("0e:00:00:00:ff:09");
            // as on the per-peer path: 10 tries in apply (9 back-offs), one more in the reconcile after the first batch
            assertThat(node.network.counters().errors(VxlanCounters.ErrorKind.ROUTE)).isEqualTo(2);
            assertThat(node.slept).hasSize(9);
            assertThat(node.network.counters().errors(VxlanCounters.ErrorKind.NEIGHBOUR)).isZero();
        }
    }

    /**
     * Issue 23: a daemon killed and started again finds every peer's entries still in the kernel; its snapshot
     * must neither delete nor re-write any of them. A kernel monitor in the node's namespace counts deletions.
     */
    @Test
    void aRestartedNetworkFindsItsPeersProgrammedAndDeletesOrRewritesNothing() throws Exception {
        int peers = 300;
        try (Node node = programmed("vxr", peers)) {
            var ext = node.underlay("ul0", VxlanPeersIT.ADDR);
            List<LeaseEvent> batch = batch(peers);
            node.onLeaseEvents(() -> {
                node.network.close(); // as a SIGKILL leaves it: the kernel keeps device and entries
                return null;
            });

            List<String> deleted = node.deletionsDuring(() -> {
                node.register("", "10.244.1.0/24", ext, null);
                Wait.until("the tables dumped ahead", Duration.ofSeconds(10), node.network::dumpedAhead);
                // the registration's own work on the device (its address, its state) comes before the dump ahead
                assertThat(node.network.dumpAheadSpoilt()).as("dump ahead spoilt by our own registration").isFalse();
                node.apply(batch.toArray(LeaseEvent[]::new));
                node.reconcile();
                return null;
            });
            assertThat(deleted).as("kernel deletions during the restart").isEmpty();
            assertThat(counts(node)).containsExactly(peers, peers, peers);
            assertThat(node.network.counters().entriesProgrammed()).as("entries re-written").isZero();
            assertThat(node.onLeaseEvents(() -> node.network.peers())).isEqualTo(peers);
        }
    }

    /**
     * A restart after peers went away and one changed its MAC while we were down: the pass right after the first batch
     * (which reuses that batch's comparison with the kernel instead of dumping again) removes the gone peers' entries
     * and the changed peer's old FDB entry, and leaves the kernel as a fresh read-back would want it.
     */
    @Test
    void aRestartAfterPeersLeftAndOneChangedRemovesWhatNoLeaseWantsInItsFirstPass() throws Exception {
        int peers = 300;
        int gone = 10;
        try (Node node = programmed("vxs", peers)) {
            var ext = node.underlay("ul0", VxlanPeersIT.ADDR);
            List<LeaseEvent> batch = batch(peers);
            node.onLeaseEvents(() -> {
                node.network.close(); // as a SIGKILL leaves it
                return null;
            });

            List<LeaseEvent> after = new ArrayList<>(batch.subList(gone, peers));
            after.set(0, LeaseEvent.added(peer(gone, "0e:00:00:01:%02x:%02x"))); // peer 10's VTEP got a new MAC
            node.register("", "10.244.1.0/24", ext, null);
            node.apply(after.toArray(LeaseEvent[]::new));

            assertThat(counts(node)).containsExactly(peers - gone, peers - gone, peers - gone);
            assertThat(node.bridge("fdb", "show", "dev", "flannel.1")).contains("0e:00:00:01:00:0a")
                    .doesNotContain("0e:00:00:00:00:0a").doesNotContain("0e:00:00:00:00:09");
            assertThat(node.ip("neigh", "show", "10.100.10.0", "dev", "flannel.1")).contains("0e:00:00:01:00:0a");
            assertThat(node.ip("route", "show", "10.100.9.0/24")).isBlank();
            assertThat(node.network.counters().entriesProgrammed()).as("only the changed peer written").isEqualTo(3L);
            node.reconcile(); // a pass that dumps: nothing left to repair or remove
            assertThat(counts(node)).containsExactly(peers - gone, peers - gone, peers - gone);
            assertThat(node.bridge("fdb", "show", "dev", "flannel.1").lines().filter(l -> l.contains(" dst ")))
                    .hasSize(peers - gone);
        }
    }

    /**
     * Issue 23: a restart's first batch compares against the tables dumped ahead, at registration. A neighbour and a
     * route deleted after that dump is complete (the netlink watch sees it and spoils the dump) are not taken as present: the
     * first batch dumps again and writes exactly that peer back, before any later pass.
     */
    @Test
    void aRestartWhoseEntriesAreDeletedAfterTheDumpAheadWritesThemInItsFirstBatch() throws Exception {
        int peers = 300;
        try (Node node = programmed("vxd", peers)) {
            var ext = node.underlay("ul0", VxlanPeersIT.ADDR);
            List<LeaseEvent> batch = batch(peers);
            node.onLeaseEvents(() -> {
                node.network.close(); // as a SIGKILL leaves it
                return null;
            });

            node.register("", "10.244.1.0/24", ext, null);
            Wait.until("the tables dumped ahead, peer 7 in them", Duration.ofSeconds(10), node.network::dumpedAhead);
            node.ip("route", "del", "10.100.7.0/24");
            node.ip("neigh", "del", "10.100.7.0", "dev", "flannel.1");
            Wait.until("the watch saw the deletions", Duration.ofSeconds(10), node.network::dumpAheadSpoilt);
            node.apply(batch.toArray(LeaseEvent[]::new));

            assertThat(counts(node)).containsExactly(peers, peers, peers);
            assertThat(node.ip("route", "show", "10.100.7.0/24")).isNotBlank();
            assertThat(node.network.counters().entriesProgrammed()).as("only peer 7 written again").isEqualTo(3L);
            assertThat(node.network.counters().repairs()).as("written by the first batch, not repaired by a later pass")
                    .isZero();
        }
    }

    private static Lease peer(int i, String macFormat) {
        return Leases.v4("10." + (100 + (i >> 8)) + "." + (i & 255) + ".0/24", "172.16." + (i >> 8) + "." + (i & 255),
                String.format(macFormat, i >> 8, i & 255));
    }

    /** Permanent neighbours, FDB entries with a destination and onlink routes on flannel.1, by our own dumps. */
    private static List<Integer> counts(Node node) throws Exception {
        return node.onLeaseEvents(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                int idx = nl.link("flannel.1").orElseThrow().index();
                return List.of(
                        (int) nl.neighbours(idx).stream().filter(n -> n.state() == Neighbour.NUD_PERMANENT).count(),
                        (int) nl.fdb(idx).stream().filter(f -> f.mac().value() != 0).count(),
                        (int) nl.routesOf(idx).stream().filter(Route::onlink).count());
            }
        });
    }

    /** A node with {@code peers} peers applied in one batch, all three entries of each checked in the kernel. */
    private static Node programmed(String name, int peers) throws Exception {
        Node node = Node.withUnderlay(name, VxlanPeersIT.ADDR);
        try {
            node.register("", "10.244.1.0/24", node.underlay("ul0", VxlanPeersIT.ADDR), null);
            node.apply(batch(peers).toArray(LeaseEvent[]::new));
            assertThat(counts(node)).containsExactly(peers, peers, peers);
            return node;
        } catch (Exception | AssertionError e) {
            node.close();
            throw e;
        }
    }

    /** Peers 0 … n-1 added, their VTEPs' MACs 0e:00:00:00:… */
    private static List<LeaseEvent> batch(int peers) {
        List<LeaseEvent> batch = new ArrayList<>();
        for (int i = 0; i < peers; i++) {
            batch.add(LeaseEvent.added(peer(i, "0e:00:00:00:%02x:%02x")));
        }
        return batch;
    }
}
