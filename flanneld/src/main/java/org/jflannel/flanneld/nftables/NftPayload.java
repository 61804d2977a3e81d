package org.jflannel.flanneld.nftables;

/**
 * The stdin of {@code nft -f -} for flannel's nftables rules (REFERENCE §8.4, upstream
 * {@code pkg/trafficmngr/nftables}), in the text upstream's knftables library writes: one
 * {@code add}/{@code flush} command per line. One payload is one atomic transaction. {@code C} is
 * the cluster network, {@code P} the own lease subnet, both as text ({@code 10.244.0.0/16}); every
 * method takes the family ({@code ipv6} false: table {@code ip flannel-ipv4}, true:
 * {@code ip6 flannel-ipv6}).
 */
public final class NftPayload {
    public static final String TABLE_V4 = "flannel-ipv4";
    public static final String TABLE_V6 = "flannel-ipv6";
    public static final String POSTRTG = "postrtg";
    public static final String FORWARD = "forward";
    /** The chain upstream adds in its fully-random check transaction (never committed: {@code nft --check}). */
    static final String TEST_CHAIN = "test-chain";
    /** kube-proxy's masquerade mark, matched exactly in nftables mode (iptables masks it). */
    static final String KUBE_PROXY_MARK = "0x4000";

    private NftPayload() {
    }

    public static String table(boolean ipv6) {
        return ipv6 ? TABLE_V6 : TABLE_V4;
    }

    /** {@code ip} or {@code ip6}: both the table family and the rule's address-match keyword. */
    public static String family(boolean ipv6) {
        return ipv6 ? "ip6" : "ip";
    }

    /** The support probe ({@code nft --check}): knftables checks that a table with a comment can be added. */
    public static String supportProbe(boolean ipv6) {
        return "add table " + family(ipv6) + " " + table(ipv6) + " { comment \"test\" ; }\n";
    }

    /** Init: the table with its comment; adding an existing table changes nothing else in it. */
    public static String initTable(boolean ipv6) {
        return "add table " + family(ipv6) + " " + table(ipv6) + " { comment \"rules for " + table(ipv6) + "\" ; }\n";
    }

    /** §8.4 masquerade: the {@code postrtg} chain, flushed and rebuilt with the six golden rules. */
    public static String masquerade(boolean ipv6, String cluster, String pod, boolean fullyRandom) {
        String f = family(ipv6);
        String multicast = ipv6 ? "ff00::/8" : "224.0.0.0/4";
        String masq = fullyRandom ? "masquerade fully-random" : "masquerade";
        StringBuilder sb = new StringBuilder(768);
        chain(sb, ipv6, POSTRTG, "type nat hook postrouting priority srcnat");
        rule(sb, ipv6, POSTRTG, "meta mark " + KUBE_PROXY_MARK + " return");
        rule(sb, ipv6, POSTRTG, f + " saddr " + pod + " " + f + " daddr " + cluster + " return");
        rule(sb, ipv6, POSTRTG, f + " saddr " + cluster + " " + f + " daddr " + pod + " return");
        rule(sb, ipv6, POSTRTG, f + " saddr != " + pod + " " + f + " daddr " + cluster + " return");
        rule(sb, ipv6, POSTRTG, f + " saddr " + cluster + " " + f + " daddr != " + multicast + " " + masq);
        rule(sb, ipv6, POSTRTG, f + " saddr != " + cluster + " " + f + " daddr " + cluster + " " + masq);
        return sb.toString();
    }

    /** §8.4 forward: the {@code forward} chain, flushed and rebuilt with the two accept rules. */
    public static String forward(boolean ipv6, String cluster) {
        String f = family(ipv6);
        StringBuilder sb = new StringBuilder(384);
        chain(sb, ipv6, FORWARD, "type filter hook forward priority filter");
        rule(sb, ipv6, FORWARD, f + " saddr " + cluster + " accept");
        rule(sb, ipv6, FORWARD, f + " daddr " + cluster + " accept");
        return sb.toString();
    }

    /** Upstream's {@code checkRandomfully}: a regular test chain with one fully-random masquerade rule, only checked. */
    public static String fullyRandomProbe(boolean ipv6) {
        String prefix = family(ipv6) + " " + table(ipv6) + " " + TEST_CHAIN;
        return "add chain " + prefix + " { comment \"chain to test if fully-random is supported\" ; }\n"
                + "add rule " + prefix + " masquerade fully-random\n";
    }

    /**
     * §8.5 cleanup: both tables deleted in one transaction. Each is added first, so that deleting a
     * table that is not there is no error (nft 1.0.6 has no {@code destroy}).
     */
    public static String deleteTables() {
        return "add table ip " + TABLE_V4 + "\ndelete table ip " + TABLE_V4 + "\n"
                + "add table ip6 " + TABLE_V6 + "\ndelete table ip6 " + TABLE_V6 + "\n";
    }

    private static void chain(StringBuilder sb, boolean ipv6, String chain, String spec) {
        String prefix = family(ipv6) + " " + table(ipv6) + " " + chain;
        sb.append("add chain ").append(prefix).append(" { ").append(spec).append(" ; }\n");
        sb.append("flush chain ").append(prefix).append('\n');
    }

    private static void rule(StringBuilder sb, boolean ipv6, String chain, String rule) {
        sb.append("add rule ").append(family(ipv6)).append(' ').append(table(ipv6)).append(' ').append(chain).append(' ')
                .append(rule).append('\n');
    }
}
