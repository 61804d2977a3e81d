package org.jflannel.testsupport.cluster;

import java.net.InetAddress;
import java.util.List;
import java.util.Optional;
import org.jflannel.linuxnet.netlink.FdbEntry;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.Neighbour;
import org.jflannel.linuxnet.netlink.Route;

/**
 * What a node's kernel holds on its VXLAN device at one moment, read through rtnetlink dumps:
 * the device itself (null when absent), and the neighbour, FDB and route entries on it.
 */
public record FlannelEntries(Link link, List<Neighbour> neighbours, List<FdbEntry> fdb, List<Route> routes) {

    public FlannelEntries {
        neighbours = List.copyOf(neighbours);
        fdb = List.copyOf(fdb);
        routes = List.copyOf(routes);
    }

    static FlannelEntries absent() {
        return new FlannelEntries(null, List.of(), List.of(), List.of());
    }

    public boolean linkPresent() {
        return link != null;
    }

    /** Routes whose destination is {@code subnet} (e.g. {@code 10.244.2.0/24}, or {@code fd6a:f100:0:101::/64} in any spelling). */
    public List<Route> routesTo(String subnet) {
        String want = subnet.contains(":") ? IpPrefix.parse(subnet).toString() : subnet;
        return routes.stream().filter(r -> r.dst() != null && r.dst().toString().equals(want)).toList();
    }

    public Optional<Neighbour> neighbour(InetAddress ip) {
        return neighbours.stream().filter(n -> n.ip().equals(ip)).findFirst();
    }

    public List<FdbEntry> fdbTo(InetAddress dst) {
        return fdb.stream().filter(e -> dst.equals(e.dst())).toList();
    }

    /** True when the device holds a neighbour, an FDB entry and a route for each of {@code peers}. */
    public boolean covers(List<NodeLease> peers) {
        return linkPresent() && peers.stream().allMatch(p -> !routesTo(p.subnet()).isEmpty()
                && neighbour(p.subnetAddress()).isPresent() && !fdbTo(p.publicIp()).isEmpty());
    }

    /** host-gw: true when each of {@code peers} has a route to its subnet via its public IP on this device. */
    public boolean routesVia(List<NodeLease> peers) {
        return linkPresent() && peers.stream().allMatch(p -> routesTo(p.subnet()).stream()
                .anyMatch(r -> p.publicIp().equals(r.gateway())));
    }

    /** True when nothing on the device refers to {@code peer}. */
    public boolean free(NodeLease peer) {
        return routesTo(peer.subnet()).isEmpty() && neighbour(peer.subnetAddress()).isEmpty()
                && fdbTo(peer.publicIp()).isEmpty();
    }

    @Override
    public String toString() {
        return "FlannelEntries[link=" + (link == null ? "absent" : link.name() + "#" + link.index())
                + ", neighbours=" + neighbours + ", fdb=" + fdb + ", routes=" + routes + "]";
    }
}
