package org.jflannel.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jflannel.core.LeaseEvent.added;
import static org.jflannel.core.LeaseEvent.removed;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class LeaseWatcherTest {

    private static final Lease OWN = lease("10.244.1.0/24", "192.0.2.1", "0e:00:00:00:00:01");
    private static final Lease A = lease("10.244.2.0/24", "192.0.2.2", "0e:00:00:00:00:02");
    private static final Lease B = lease("10.244.3.0/24", "192.0.2.3", "0e:00:00:00:00:03");
    private static final Lease C = lease("10.244.4.0/24", "192.0.2.4", "0e:00:00:00:00:04");
    /** A re-registered: same subnet, new VTEP MAC. */
    private static final Lease A2 = lease("10.244.2.0/24", "192.0.2.2", "0e:00:00:00:00:22");

    private final LeaseWatcher watcher = new LeaseWatcher(OWN);

    @Test
    void firstSnapshotAddsEveryLeaseButTheOwn() {
        assertThat(watcher.reset(List.of(A, OWN, B))).containsExactly(added(A), added(B));
        assertThat(watcher.leases()).containsExactly(A, B);
    }

    @Test
    void laterSnapshotIsDiffedAgainstTheView() {
        watcher.reset(List.of(A, B));
        assertThat(watcher.reset(List.of(B, C, OWN))).containsExactly(removed(A), added(C));
        assertThat(watcher.leases()).containsExactly(B, C);
    }

    @Test
    void snapshotWithAChangedLeaseAddsItAgain() {
        watcher.reset(List.of(A, B));
        assertThat(watcher.reset(List.of(A2, B))).containsExactly(added(A2));
        assertThat(watcher.leases()).containsExactly(A2, B);
    }

    @Test
    void identicalSnapshotYieldsNothing() {
        watcher.reset(List.of(A, B));
        assertThat(watcher.reset(List.of(B, A))).isEmpty();
        assertThat(watcher.reset(List.of())).containsExactly(removed(B), removed(A)); // the view follows the last snapshot's order
        assertThat(watcher.leases()).isEmpty();
    }

    @Test
    void snapshotRenewedOnlyInExpirationYieldsNothing() {
        watcher.reset(List.of(A));
        Lease renewed = new Lease(A.subnet(), null, A.attrs(), Instant.parse("2030-01-01T00:00:00Z"));
        assertThat(watcher.reset(List.of(renewed))).isEmpty();
        assertThat(watcher.leases()).containsExactly(renewed);
    }

    @Test
    void duplicatesInASnapshotCollapseToTheLaterOne() {
        assertThat(watcher.reset(List.of(A, B, A2))).containsExactly(added(A2), added(B));
    }

    @Test
    void ownLeaseEventsAreFiltered() {
        watcher.reset(List.of(A));
        assertThat(watcher.update(List.of(added(OWN), removed(OWN)))).isEmpty();
        Lease ownRenewed = lease("10.244.1.0/24", "192.0.2.1", "0e:00:00:00:00:99");
        assertThat(watcher.update(List.of(added(ownRenewed)))).isEmpty();
        assertThat(watcher.leases()).containsExactly(A);
    }

    @Test
    void ownLeaseIsFilteredPerFamilyInDualStack() {
        Lease own = dual("10.244.1.0/24", "fc00:0:0:1::/64");
        LeaseWatcher w = new LeaseWatcher(own);
        Lease v4Only = lease("10.244.1.0/24", "192.0.2.1", "0e:00:00:00:00:01");
        Lease v6Only = new Lease(null, Ip6Net.parse("fc00:0:0:1::/64"), OWN.attrs(), null);
        Lease otherDual = dual("10.244.2.0/24", "fc00:0:0:2::/64");
        Lease conflicting = dual("10.244.1.0/24", "fc00:0:0:9::/64");
        assertThat(w.reset(List.of(own, v4Only, v6Only, otherDual, conflicting)))
                .containsExactly(added(otherDual), added(conflicting));
    }

    @Test
    void nullOwnLeaseFiltersNothing() {
        LeaseWatcher w = new LeaseWatcher(null);
        assertThat(w.reset(List.of(OWN, A))).containsExactly(added(OWN), added(A));
    }

    @Test
    void updateAddsNewAndRemovesKnownLeases() {
        watcher.reset(List.of(A));
        assertThat(watcher.update(List.of(added(B), removed(A)))).containsExactly(added(B), removed(A));
        assertThat(watcher.leases()).containsExactly(B);
    }

    @Test
    void reAddedLeaseWithChangedAttributesYieldsAddedAgain() {
        watcher.reset(List.of(A));
        assertThat(watcher.update(List.of(added(A2)))).containsExactly(added(A2));
        assertThat(watcher.leases()).containsExactly(A2);
    }

    @Test
    void reAddedLeaseWithSameAttributesYieldsNothing() {
        watcher.reset(List.of(A));
        assertThat(watcher.update(List.of(added(A)))).isEmpty();
    }

    @Test
    void removalOfAnUnknownLeaseIsDropped() {
        watcher.reset(List.of(A));
        assertThat(watcher.update(List.of(removed(B)))).isEmpty();
        assertThat(watcher.leases()).containsExactly(A);
    }

    @Test
    void removalReportsTheLeaseAsItWasKnown() {
        watcher.reset(List.of(A));
        assertThat(watcher.update(List.of(removed(A2)))).containsExactly(removed(A));
    }

    @Test
    void duplicatesWithinABatchCollapseToTheNetEffect() {
        watcher.reset(List.of(A));
        assertThat(watcher.update(List.of(added(B), added(B), added(C), removed(C), removed(A), added(A2))))
                .containsExactly(added(B), added(A2));
        assertThat(watcher.update(List.of(removed(B), added(B)))).isEmpty();
        assertThat(watcher.update(List.of(removed(B), removed(B)))).containsExactly(removed(B));
        assertThat(watcher.leases()).containsExactly(A2);
    }

    @Test
    void resetAfterUpdatesSeesTheUpdatedView() {
        watcher.reset(List.of(A));
        watcher.update(List.of(added(B)));
        assertThat(watcher.reset(List.of(B, C))).containsExactly(removed(A), added(C));
    }

    @Test
    void returnedListsAreImmutableSnapshots() {
        List<Lease> view = watcher.leases();
        watcher.reset(List.of(A));
        assertThat(view).isEmpty();
    }

    private static Lease lease(String subnet, String publicIp, String mac) {
        return new Lease(Ip4Net.parse(subnet), null, attrs(publicIp, mac), null);
    }

    private static Lease dual(String subnet, String subnet6) {
        return new Lease(Ip4Net.parse(subnet), Ip6Net.parse(subnet6), attrs("192.0.2.9", "0e:00:00:00:00:09"), null);
    }

    private static LeaseAttrs attrs(String publicIp, String mac) {
        try {
            return new LeaseAttrs((Inet4Address) InetAddress.getByName(publicIp), null, "vxlan",
                    "{\"VNI\":1,\"VtepMAC\":\"" + mac + "\"}", null);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
