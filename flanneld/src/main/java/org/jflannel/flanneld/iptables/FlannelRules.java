package org.jflannel.flanneld.iptables;

import java.util.ArrayList;
import java.util.List;

/**
 * The golden rules of upstream flannel (REFERENCE §8.1, §8.2; upstream {@code e2e/rules.go}), in
 * their order. {@code C} is the cluster network, {@code P} the own lease subnet, both as text
 * ({@code 10.244.0.0/16}).
 */
public final class FlannelRules {
    public static final String POSTRTG = "FLANNEL-POSTRTG";
    public static final String FWD = "FLANNEL-FWD";
    static final String MASQ_COMMENT = "flanneld masq";
    static final String FWD_COMMENT = "flanneld forward";
    /** kube-proxy's masquerade mark: traffic it marked is not masqueraded twice. */
    static final String KUBE_PROXY_MARK = "0x4000/0x4000";

    private FlannelRules() {
    }

    /** §8.1: nat table; {@code randomFully} appends {@code --random-fully} to the two MASQUERADE rules. */
    public static List<IptRule> masquerade(String cluster, String pod, boolean ipv6, boolean randomFully) {
        String multicast = ipv6 ? "ff00::/8" : "224.0.0.0/4";
        List<IptRule> rules = new ArrayList<>(7);
        rules.add(nat("POSTROUTING", "-m", "comment", "--comment", MASQ_COMMENT, "-j", POSTRTG));
        rules.add(nat(POSTRTG, "-m", "mark", "--mark", KUBE_PROXY_MARK, "-m", "comment", "--comment", MASQ_COMMENT, "-j", "RETURN"));
        rules.add(nat(POSTRTG, "-s", pod, "-d", cluster, "-m", "comment", "--comment", MASQ_COMMENT, "-j", "RETURN"));
        rules.add(nat(POSTRTG, "-s", cluster, "-d", pod, "-m", "comment", "--comment", MASQ_COMMENT, "-j", "RETURN"));
        rules.add(nat(POSTRTG, "!", "-s", cluster, "-d", pod, "-m", "comment", "--comment", MASQ_COMMENT, "-j", "RETURN"));
        rules.add(nat(POSTRTG, masq(randomFully, "-s", cluster, "!", "-d", multicast, "-m", "comment", "--comment", MASQ_COMMENT,
                "-j", "MASQUERADE")));
        rules.add(nat(POSTRTG, masq(randomFully, "!", "-s", cluster, "-d", cluster, "-m", "comment", "--comment", MASQ_COMMENT,
                "-j", "MASQUERADE")));
        return List.copyOf(rules);
    }

    /** §8.2: filter table. */
    public static List<IptRule> forward(String cluster) {
        return List.of(
                new IptRule("filter", "FORWARD", List.of("-m", "comment", "--comment", FWD_COMMENT, "-j", FWD)),
                new IptRule("filter", FWD, List.of("-s", cluster, "-m", "comment", "--comment", FWD_COMMENT, "-j", "ACCEPT")),
                new IptRule("filter", FWD, List.of("-d", cluster, "-m", "comment", "--comment", FWD_COMMENT, "-j", "ACCEPT")));
    }

    /** The two jump rules the Ours cleanup removes before deleting the chains (§8.5). */
    static List<IptRule> jumps() {
        return List.of(masqueradeJump(), forward("0.0.0.0/0").get(0));
    }

    static IptRule masqueradeJump() {
        return nat("POSTROUTING", "-m", "comment", "--comment", MASQ_COMMENT, "-j", POSTRTG);
    }

    private static String[] masq(boolean randomFully, String... spec) {
        if (!randomFully) {
            return spec;
        }
        String[] out = java.util.Arrays.copyOf(spec, spec.length + 1);
        out[spec.length] = "--random-fully";
        return out;
    }

    private static IptRule nat(String chain, String... spec) {
        return new IptRule("nat", chain, List.of(spec));
    }
}
