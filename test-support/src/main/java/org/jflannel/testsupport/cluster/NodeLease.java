package org.jflannel.testsupport.cluster;

import java.net.InetAddress;
import java.util.Objects;
import org.jflannel.core.Ip4Net;
import org.jflannel.linuxnet.netlink.IpPrefix;

/**
 * A node's lease of one family as the harness sees it: node name, subnet (from subnet.env) and public IP
 * (underlay address). IPv4 ({@code FLANNEL_SUBNET}, 192.0.2.x), or in dual stack the IPv6 half
 * ({@code FLANNEL_IPV6_SUBNET}, the node's ULA underlay address).
 */
public record NodeLease(String node, String subnet, InetAddress publicIp, int mtu) {

    public NodeLease {
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(publicIp, "publicIp");
        subnet = subnet.contains(":") ? IpPrefix.parse(subnet).network().toString() : Ip4Net.parse(subnet).toString();
    }

    /** The subnet's network address, which flanneld uses as the peer's neighbour IP and route gateway. */
    public InetAddress subnetAddress() {
        return isIpv6() ? IpPrefix.parse(subnet).address() : Ip4Net.parse(subnet).inetAddress();
    }

    /** Whether this is the IPv6 half of a dual-stack lease. */
    public boolean isIpv6() {
        return subnet.contains(":");
    }

    /** etcd key suffix of this lease: {@code 10.244.3.0-24}. */
    public String etcdKeyName() {
        return subnet.replace('/', '-');
    }
}
