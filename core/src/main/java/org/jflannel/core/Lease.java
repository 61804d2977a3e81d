package org.jflannel.core;

import java.time.Instant;
import java.util.Objects;

/**
 * One node's subnet lease: its IPv4 and/or IPv6 subnet and what it published. A lease is
 * identified by its subnets ({@link #key()}); {@code expiration} is informational (null for an
 * etcd reservation, which has no TTL).
 */
public record Lease(Ip4Net subnet, Ip6Net ipv6Subnet, LeaseAttrs attrs, Instant expiration) {

    public Lease {
        if (subnet == null && ipv6Subnet == null) {
            throw new IllegalArgumentException("a lease needs an IPv4 or an IPv6 subnet");
        }
        Objects.requireNonNull(attrs, "attrs");
    }

    public boolean enableIPv4() {
        return subnet != null;
    }

    public boolean enableIPv6() {
        return ipv6Subnet != null;
    }

    /** The identity of the lease, as upstream's etcd key names it: {@code 10.5.34.0-24} or {@code 10.5.34.0-24&fc00::-64}. */
    public String key() {
        StringBuilder sb = new StringBuilder();
        if (subnet != null) {
            sb.append(Ip4Net.formatAddress(subnet.address())).append('-').append(subnet.prefixLength());
        }
        if (ipv6Subnet != null) {
            if (sb.length() > 0) {
                sb.append('&');
            }
            sb.append(Ip6Net.formatAddress(ipv6Subnet.high(), ipv6Subnet.low())).append('-').append(ipv6Subnet.prefixLength());
        }
        return sb.toString();
    }

    /** Same subnets, whatever the attributes. */
    public boolean sameSubnets(Lease other) {
        return Objects.equals(subnet, other.subnet) && Objects.equals(ipv6Subnet, other.ipv6Subnet);
    }

    @Override
    public String toString() {
        return "Lease[" + key() + " publicIp=" + (attrs.publicIp() == null ? "" : attrs.publicIp().getHostAddress())
                + (attrs.publicIpv6() == null ? "" : " publicIpv6=" + attrs.publicIpv6().getHostAddress())
                + " backend=" + attrs.backendType() + "]";
    }
}
