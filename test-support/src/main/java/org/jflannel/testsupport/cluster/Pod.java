package org.jflannel.testsupport.cluster;

import java.util.Objects;

/**
 * A pod of the cluster: a network namespace attached through the CNI chain on node {@code node}, with
 * its IPv4 address and, in a dual-stack cluster, its IPv6 address ({@code null} otherwise).
 */
public record Pod(String name, int node, String namespace, String ip, String ipv6) {
    public Pod {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(ip, "ip");
    }

    /** An IPv4-only pod. */
    public Pod(String name, int node, String namespace, String ip) {
        this(name, node, namespace, ip, null);
    }

    /** The pod's address of {@code family}; fails naming the pod when it has none of that family. */
    public String address(Family family) {
        if (family == Family.IPV4) {
            return ip;
        }
        if (ipv6 == null) {
            throw new IllegalStateException("pod " + name + " has no IPv6 address (not a dual-stack cluster)");
        }
        return ipv6;
    }

    /** An address family of the pod network. */
    public enum Family {
        IPV4("-4"), IPV6("-6");

        private final String flag;

        Family(String flag) {
            this.flag = flag;
        }

        /** {@code ping}'s and {@code ip}'s flag for this family: {@code -4} or {@code -6}. */
        public String flag() {
            return flag;
        }
    }
}
