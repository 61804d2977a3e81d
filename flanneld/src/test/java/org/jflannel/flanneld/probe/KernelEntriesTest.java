package org.jflannel.flanneld.probe;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.util.List;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.MacAddress;
import org.jflannel.linuxnet.netlink.FdbEntry;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Neighbour;
import org.jflannel.linuxnet.netlink.Route;
import org.junit.jupiter.api.Test;

class KernelEntriesTest {
    private static final MacAddress LEASE_MAC = MacAddress.parse("0e:00:00:00:00:02");
    private static final MacAddress OTHER = MacAddress.parse("0e:00:00:00:00:99");
    private final PeerTarget peer = PeerTarget.of(new Lease(Ip4Net.parse("10.244.2.0/24"), null,
            new LeaseAttrs((java.net.Inet4Address) ip("192.0.2.12"), null, "vxlan",
                    "{\"VNI\":1,\"VtepMAC\":\"" + LEASE_MAC + "\"}", null), null)).orElseThrow();

    @Test
    void entriesMatchingTheLeaseAreNotStaleAndShowInTheView() {
        KernelEntries k = kernel(LEASE_MAC, LEASE_MAC);
        assertThat(k.staleness(peer)).isEmpty();
        KernelEntries.PeerEntriesView v = k.of(peer);
        assertThat(v.neighbourMac()).isEqualTo(LEASE_MAC.toString());
        assertThat(v.fdb()).containsExactly(LEASE_MAC + " dst 192.0.2.12");
        assertThat(v.route()).isEqualTo("10.244.2.0/24 via 10.244.2.0 onlink");
    }

    @Test
    void neighbourWithAnotherMacIsStaleAndSaysWhich() {
        assertThat(kernel(OTHER, LEASE_MAC).staleness(peer)).hasValueSatisfying(s ->
                assertThat(s).contains("neighbour 10.244.2.0 has " + OTHER, "lease says " + LEASE_MAC));
    }

    @Test
    void fdbEntryWithAnotherMacIsStale() {
        assertThat(kernel(LEASE_MAC, OTHER).staleness(peer)).hasValueSatisfying(s -> assertThat(s).startsWith("fdb to 192.0.2.12"));
    }

    @Test
    void neighbourWithoutFdbEntryIsStale() {
        assertThat(kernel(LEASE_MAC, null).staleness(peer)).hasValue("no fdb entry for " + LEASE_MAC + " to 192.0.2.12");
    }

    @Test
    void noEntriesAtAllIsNotJudged() {
        assertThat(kernel(null, null).staleness(peer)).as("DirectRouting peers have none").isEmpty();
        assertThat(KernelEntries.NONE.staleness(peer)).isEmpty();
    }

    @Test
    void leaseWithoutVtepMacIsNotJudged() {
        PeerTarget udp = PeerTarget.of(new Lease(Ip4Net.parse("10.244.2.0/24"), null,
                new LeaseAttrs((java.net.Inet4Address) ip("192.0.2.12"), null, "udp", null, null), null)).orElseThrow();
        assertThat(udp.vtepMac()).isNull();
        assertThat(kernel(OTHER, OTHER).staleness(udp)).isEmpty();
    }

    @Test
    void vtepMacIsReadCaseInsensitivelyAndBadDataGivesNone() {
        assertThat(PeerTarget.vtepMac("{\"vtepmac\":\"0e:00:00:00:00:02\"}")).isEqualTo(LEASE_MAC);
        assertThat(PeerTarget.vtepMac("{\"VtepMAC\":\"nope\"}")).isNull();
        assertThat(PeerTarget.vtepMac("not json")).isNull();
    }

    private static KernelEntries kernel(MacAddress neighbour, MacAddress fdb) {
        InetAddress vtep = ip("10.244.2.0");
        return new KernelEntries(
                neighbour == null ? List.of() : List.of(Neighbour.permanent(5, vtep, neighbour)),
                fdb == null ? List.of() : List.of(new FdbEntry(5, fdb, ip("192.0.2.12"))),
                List.of(Route.onlink(IpPrefix.parse("10.244.2.0/24"), vtep, 5)), true);
    }

    private static InetAddress ip(String s) {
        try {
            return InetAddress.getByName(s);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
