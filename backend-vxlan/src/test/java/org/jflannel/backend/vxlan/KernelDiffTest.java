package org.jflannel.backend.vxlan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jflannel.backend.vxlan.Leases.ip;

import java.util.List;
import org.jflannel.core.MacAddress;
import org.jflannel.linuxnet.netlink.FdbEntry;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Neighbour;
import org.jflannel.linuxnet.netlink.Route;
import org.junit.jupiter.api.Test;

class KernelDiffTest {
    static final int DEV = 5;
    static final PeerEntries.Encapsulated A = (PeerEntries.Encapsulated) PeerPlannerTest.vxlan(DEV, "10.244.2.0/24", "10.244.2.0", "192.0.2.2", "0e:00:00:00:00:02");
    static final PeerEntries.Encapsulated B = (PeerEntries.Encapsulated) PeerPlannerTest.vxlan(DEV, "10.244.3.0/24", "10.244.3.0", "192.0.2.3", "0e:00:00:00:00:03");

    @Test
    void allPresentMeansNothingToDo() {
        KernelDiff d = KernelDiff.of(List.of(A, B), List.of(A.neighbour(), B.neighbour()), List.of(A.fdb(), B.fdb()),
                List.of(A.route(), B.route()), true);
        assertThat(d.missing()).isEmpty();
        assertThat(d.wrongParts()).isZero();
        assertThat(d.strays()).isZero();
    }

    @Test
    void missingRouteAndWrongMacNameTheirPeers() {
        Neighbour wrongMac = Neighbour.permanent(DEV, B.neighbour().ip(), MacAddress.parse("0e:00:00:00:00:99"));
        KernelDiff d = KernelDiff.of(List.of(A, B), List.of(A.neighbour(), wrongMac), List.of(A.fdb(), B.fdb()),
                List.of(B.route()), true);
        assertThat(d.missing()).containsExactly(new KernelDiff.Missing(A, 1), new KernelDiff.Missing(B, 1));
        assertThat(d.wrongParts()).isEqualTo(2);
        assertThat(d.strays()).isZero();
    }

    @Test
    void routeWithoutOnlinkIsWrong() {
        Route plain = new Route(A.route().dst(), A.route().gateway(), DEV, 0, false, 1, 254, 3);
        KernelDiff d = KernelDiff.of(List.of(A), List.of(A.neighbour()), List.of(A.fdb()), List.of(plain), true);
        assertThat(d.missing()).containsExactly(new KernelDiff.Missing(A, 1));
        assertThat(d.strayRoutes()).isEmpty(); // same dst: replace fixes it
    }

    @Test
    void entriesOfNoLeaseAreStraysOnceTheSnapshotIsKnown() {
        Route kernelRoute = new Route(IpPrefix.parse("fe80::/64"), null, DEV, 0, false, 1, 254, KernelDiff.RTPROT_KERNEL);
        Neighbour learned = new Neighbour(DEV, ip("10.244.9.9"), MacAddress.parse("0e:00:00:00:00:09"), 0x02);
        FdbEntry allZero = new FdbEntry(DEV, new MacAddress(0), ip("192.0.2.200"));
        List<Neighbour> neigh = List.of(A.neighbour(), B.neighbour(), learned);
        List<FdbEntry> fdb = List.of(A.fdb(), B.fdb(), allZero);
        List<Route> routes = List.of(A.route(), B.route(), kernelRoute);

        KernelDiff before = KernelDiff.of(List.of(A), neigh, fdb, routes, false);
        assertThat(before.strays()).isZero();

        KernelDiff after = KernelDiff.of(List.of(A), neigh, fdb, routes, true);
        assertThat(after.strayNeighbours()).containsExactly(B.neighbour());
        assertThat(after.strayFdb()).containsExactly(B.fdb());
        assertThat(after.strayRoutes()).containsExactly(B.route());
        assertThat(after.missing()).isEmpty();
    }
}
