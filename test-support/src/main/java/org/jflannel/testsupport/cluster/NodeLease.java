package org.jflannel.testsupport.cluster;

import java.net.InetAddress;
import java.util.Objects;
import org.jflannel.core.Ip4Net;

/** A node's lease as the harness sees it: node name, subnet (from subnet.env) and public IP (underlay address). */
public record NodeLease(String node, String subnet, InetAddress publicIp, int mtu) {

    public NodeLease {
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(publicIp, "publicIp");
        subnet = Ip4Net.parse(subnet).toString();
    }

    /** The subnet's network address, which flanneld uses as the peer's neighbour IP and route gateway. */
    public InetAddress subnetAddress() {
        return Ip4Net.parse(subnet).inetAddress();
    }

    /** etcd key suffix of this lease: {@code 10.244.3.0-24}. */
    public String etcdKeyName() {
        return subnet.replace('/', '-');
    }
}
