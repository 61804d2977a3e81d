package org.jflannel.testsupport.cluster;

import java.security.SecureRandom;

/**
 * Names and underlay addresses of one cluster run. Every namespace name starts with {@code jf} and
 * the run's random id, so two runs (or a run and anything else on the machine) never collide, and
 * stays within 15 characters: {@code jf<id>fab}, {@code jf<id>n<i>}, {@code jf<id>n<i>p<j>}.
 * The underlay 192.0.2.0/24 (TEST-NET-1), and in dual stack fd6a:f100::/64 beside it, exist only
 * inside the run's own namespaces.
 */
public record ClusterNames(String id) {
    static final String UNDERLAY_PREFIX = "192.0.2.";
    static final int UNDERLAY_PREFIX_LEN = 24;
    static final String FABRIC_IP = UNDERLAY_PREFIX + "1";
    /** The dual-stack underlay: a ULA /64 on the same bridge, node i at {@code fd6a:f100::(10+i)} (digits as in IPv4). */
    static final String UNDERLAY_V6_PREFIX = "fd6a:f100::";
    static final int UNDERLAY_V6_PREFIX_LEN = 64;
    static final String FABRIC_IPV6 = UNDERLAY_V6_PREFIX + "1";
    /** Name of the data interface inside each node namespace (flanneld runs with {@code --iface=eth0}). */
    public static final String NODE_IFACE = "eth0";
    static final String FABRIC_BRIDGE = "br0";

    private static final SecureRandom RANDOM = new SecureRandom();

    public ClusterNames {
        if (!id.matches("[a-z0-9]{5}")) {
            throw new IllegalArgumentException("run id: expected 5 characters [a-z0-9], got \"" + id + "\"");
        }
    }

    /** A fresh random run id. */
    public static ClusterNames random() {
        StringBuilder sb = new StringBuilder(5);
        for (int i = 0; i < 5; i++) {
            sb.append(Character.forDigit(RANDOM.nextInt(36), 36));
        }
        return new ClusterNames(sb.toString());
    }

    /** Prefix shared by every namespace of this run. */
    public String prefix() {
        return "jf" + id;
    }

    public String fabric() {
        return prefix() + "fab";
    }

    /** Namespace of node {@code i} (1-based). */
    public String node(int i) {
        return prefix() + "n" + i;
    }

    /** Node name as flanneld and the Kubernetes API know it. */
    public static String nodeName(int i) {
        return "node" + i;
    }

    /** Namespace of pod {@code j} (1-based) on node {@code i}. */
    public String pod(int i, int j) {
        return node(i) + "p" + j;
    }

    /** Fabric-side end of node {@code i}'s veth (inside the fabric namespace). */
    public static String fabricPort(int i) {
        return "fp" + i;
    }

    /** Underlay address of node {@code i}: 192.0.2.(10+i). */
    public static String nodeIp(int i) {
        return UNDERLAY_PREFIX + (10 + i);
    }

    /** Underlay IPv6 address of node {@code i} in a dual-stack run: fd6a:f100::(10+i), e.g. {@code fd6a:f100::11}. */
    public static String nodeIpv6(int i) {
        return UNDERLAY_V6_PREFIX + (10 + i);
    }

    public static String fabricIp() {
        return FABRIC_IP;
    }
}
