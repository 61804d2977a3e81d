package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jflannel.backend.udp.Leases.udp;
import static org.jflannel.core.LeaseEvent.added;
import static org.jflannel.core.LeaseEvent.removed;

import java.util.ArrayList;
import java.util.List;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.junit.jupiter.api.Test;

class PeerBookTest {
    private final PeerBook book = new PeerBook(udp("10.244.1.0/24", "192.0.2.1"), 8285);

    @Test
    void addedLeaseRoutesItsSubnetToItsPublicIpAndPort() {
        PeerTable t = book.apply(List.of(added(udp("10.244.2.0/24", "192.0.2.2"))));

        Peer p = t.route(Ip4Net.parseAddress("10.244.2.77"));
        assertThat(p).isNotNull();
        assertThat(p.endpoint().getAddress().getHostAddress()).isEqualTo("192.0.2.2");
        assertThat(p.endpoint().getPort()).isEqualTo(8285);
    }

    @Test
    void aPeerSaysInItsBackendDataWhetherItsKernelDecapsulates() {
        LeaseAttrs decap = new LeaseAttrs(Ip4Net.toInet(Ip4Net.parseAddress("192.0.2.2")), null, "", "{\"KernelDecap\":true}", null);
        book.apply(List.of(added(Leases.published("10.244.2.0/24", decap)), added(udp("10.244.3.0/24", "192.0.2.3"))));
        assertThat(book.peers()).extracting(Peer::subnet, Peer::kernelDecap).containsExactlyInAnyOrder(
                org.assertj.core.groups.Tuple.tuple(Ip4Net.parse("10.244.2.0/24"), true),
                org.assertj.core.groups.Tuple.tuple(Ip4Net.parse("10.244.3.0/24"), false));

        // the same node restarted without its kernel path: same subnet and address, the peer is replaced
        book.apply(List.of(added(udp("10.244.2.0/24", "192.0.2.2"))));
        assertThat(book.peers()).filteredOn(p -> p.subnet().equals(Ip4Net.parse("10.244.2.0/24")))
                .singleElement().extracting(Peer::kernelDecap).isEqualTo(false);
    }

    @Test
    void removedLeaseLeavesTheTable() {
        book.apply(List.of(added(udp("10.244.2.0/24", "192.0.2.2")), added(udp("10.244.3.0/24", "192.0.2.3"))));

        PeerTable t = book.apply(List.of(removed(udp("10.244.2.0/24", "192.0.2.2"))));

        assertThat(t.route(Ip4Net.parseAddress("10.244.2.1"))).isNull();
        assertThat(t.knowsSender(Ip4Net.parseAddress("192.0.2.2"))).isFalse();
        assertThat(t.route(Ip4Net.parseAddress("10.244.3.1"))).isNotNull();
        assertThat(book.size()).isEqualTo(1);
    }

    @Test
    void addedAgainWithANewPublicIpReplacesThePeer() {
        book.apply(List.of(added(udp("10.244.2.0/24", "192.0.2.2"))));

        PeerTable t = book.apply(List.of(added(udp("10.244.2.0/24", "192.0.2.22"))));

        assertThat(t.route(Ip4Net.parseAddress("10.244.2.1")).endpoint().getAddress().getHostAddress()).isEqualTo("192.0.2.22");
        assertThat(t.knowsSender(Ip4Net.parseAddress("192.0.2.2"))).as("old address").isFalse();
        assertThat(book.size()).isEqualTo(1);
    }

    @Test
    void ownLeaseAndUnusableLeasesAreSkippedAndTheOthersStillApply() {
        PeerTable t = book.apply(List.of(
                added(udp("10.244.1.0/24", "192.0.2.1")),
                added(udp("10.244.4.0/24", null)),
                added(udp("10.244.5.0/24", "192.0.2.5"))));

        assertThat(t.route(Ip4Net.parseAddress("10.244.1.1"))).as("own subnet").isNull();
        assertThat(t.route(Ip4Net.parseAddress("10.244.4.1"))).as("no PublicIP").isNull();
        assertThat(t.route(Ip4Net.parseAddress("10.244.5.1"))).isNotNull();
        assertThat(book.size()).isEqualTo(1);
    }

    @Test
    void removingAnUnknownLeaseIsQuiet() {
        PeerTable t = book.apply(List.of(removed(udp("10.244.9.0/24", "192.0.2.9"))));
        assertThat(t.size()).isZero();
    }

    @Test
    void aBulkBatchOfThousandsIsAppliedWhole() {
        List<LeaseEvent> batch = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            batch.add(added(udp("10." + (100 + i / 256) + "." + (i % 256) + ".0/24",
                    "192.0." + (i / 250) + "." + (1 + i % 250))));
        }
        PeerTable t = book.apply(batch);

        assertThat(t.size()).isEqualTo(2000);
        assertThat(t.route(Ip4Net.parseAddress("10.107.207.9"))).isNotNull(); // i = 1999
        assertThat(t.allows(Ip4Net.parseAddress("192.0.7.250"), Ip4Net.parseAddress("10.107.207.9"))).isTrue();
    }
}
