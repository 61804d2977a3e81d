package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.linuxnet.sys.Sysctl;

/**
 * The run's namespaces and the wires between them, all made through rtnetlink: a fabric namespace
 * with bridge {@code br0} (192.0.2.1/24), and per node a namespace whose {@code eth0}
 * (192.0.2.(10+i)/24) is a veth whose other end is enslaved to that bridge. Nothing is created in
 * the namespace the harness runs in. Owns every namespace it created and deletes them in
 * {@link #close()}, pods included (they are registered through {@link #createPodNs}).
 */
final class Topology implements AutoCloseable {
    private final ClusterNames names;
    private final Path runDir;
    private final List<NetNs> created = Collections.synchronizedList(new ArrayList<>());
    private NetNs fabric;
    private final List<NetNs> nodes = new ArrayList<>();

    /** {@code runDir}: where each namespace is recorded before it is made, for {@link StaleRuns}. */
    Topology(ClusterNames names, Path runDir) {
        this.names = names;
        this.runDir = runDir;
    }

    /** Creates the fabric and {@code count} node namespaces, wired and addressed (IPv4 only). */
    void build(int count) throws Exception {
        build(count, false);
    }

    /**
     * Creates the fabric and {@code count} node namespaces, wired and addressed; {@code ipv6}: the bridge
     * and every {@code eth0} get a ULA address too ({@link ClusterNames#nodeIpv6}), without duplicate
     * address detection (nothing else is on this wire), and the nodes forward IPv6.
     */
    void build(int count, boolean ipv6) throws Exception {
        fabric = create(names.fabric());
        fabric.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                up(nl, "lo");
                nl.createBridge(ClusterNames.FABRIC_BRIDGE);
                int br = index(nl, ClusterNames.FABRIC_BRIDGE);
                nl.addAddress(br, IpPrefix.parse(ClusterNames.FABRIC_IP + "/" + ClusterNames.UNDERLAY_PREFIX_LEN));
                if (ipv6) {
                    Sysctl.write("net/ipv6/conf/" + ClusterNames.FABRIC_BRIDGE + "/accept_dad", "0");
                    nl.addAddress(br, IpPrefix.parse(ClusterNames.FABRIC_IPV6 + "/" + ClusterNames.UNDERLAY_V6_PREFIX_LEN));
                }
                nl.setUp(br);
            }
        });
        for (int i = 1; i <= count; i++) {
            nodes.add(buildNode(i, ipv6));
        }
    }

    private NetNs buildNode(int i, boolean ipv6) throws Exception {
        NetNs node = create(names.node(i));
        String port = ClusterNames.fabricPort(i);
        node.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                up(nl, "lo");
                nl.createVeth(ClusterNames.NODE_IFACE, port);
                nl.moveToNetns(index(nl, port), fabric);
                int eth0 = index(nl, ClusterNames.NODE_IFACE);
                nl.addAddress(eth0, IpPrefix.parse(ClusterNames.nodeIp(i) + "/" + ClusterNames.UNDERLAY_PREFIX_LEN));
                if (ipv6) {
                    Sysctl.write("net/ipv6/conf/" + ClusterNames.NODE_IFACE + "/accept_dad", "0");
                    nl.addAddress(eth0, IpPrefix.parse(ClusterNames.nodeIpv6(i) + "/" + ClusterNames.UNDERLAY_V6_PREFIX_LEN));
                }
                nl.setUp(eth0);
            }
            Sysctl.write("net/ipv4/ip_forward", "1");
            if (ipv6) {
                Sysctl.write("net/ipv6/conf/all/forwarding", "1");
            }
        });
        fabric.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                int p = index(nl, port);
                nl.setMaster(p, index(nl, ClusterNames.FABRIC_BRIDGE));
                nl.setUp(p);
            }
        });
        return node;
    }

    /** Creates pod namespace {@code name} with loopback up; deleted with the rest in {@link #close()}. */
    NetNs createPodNs(String name) throws Exception {
        NetNs pod = create(name);
        pod.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                up(nl, "lo");
            }
        });
        return pod;
    }

    NetNs fabric() {
        return fabric;
    }

    /** Namespace of node {@code i} (1-based). */
    NetNs node(int i) {
        return nodes.get(i - 1);
    }

    int nodeCount() {
        return nodes.size();
    }

    /** Names of every namespace this run created, in creation order. */
    List<String> namespaceNames() {
        synchronized (created) {
            return created.stream().map(NetNs::name).toList();
        }
    }

    private NetNs create(String name) throws IOException {
        StaleRuns.recordNamespace(runDir, name);
        NetNs ns = NetNs.create(name);
        created.add(ns);
        return ns;
    }

    private static void up(RtNetlink nl, String dev) throws NetlinkException {
        nl.setUp(index(nl, dev));
    }

    static int index(RtNetlink nl, String dev) throws NetlinkException {
        return nl.link(dev).map(Link::index)
                .orElseThrow(() -> new IllegalStateException("no device " + dev + " in this namespace"));
    }

    /** Deletes every namespace this run created, newest first; collects failures and reports them all. */
    @Override
    public void close() throws IOException {
        List<NetNs> all;
        synchronized (created) {
            all = new ArrayList<>(created);
            created.clear();
        }
        Collections.reverse(all);
        IOException failure = null;
        for (NetNs ns : all) {
            try {
                ns.delete();
            } catch (IOException | RuntimeException e) {
                if (failure == null) {
                    failure = new IOException("cannot delete every namespace of run " + names.id());
                }
                failure.addSuppressed(e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
