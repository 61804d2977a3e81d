package org.jflannel.testsupport.cluster;

import java.util.List;
import org.jflannel.testsupport.cluster.ClusterOptions.Mode;

/**
 * The demo's command line: {@code --nodes N --mode etcd|kube --backend vxlan|udp|host-gw|wireguard --dual-stack
 * --network-policy --keep --help}.
 */
record DemoArgs(ClusterOptions options, boolean keep, boolean help, boolean networkPolicy) {

    static DemoArgs parse(List<String> args) {
        ClusterOptions o = ClusterOptions.defaults();
        boolean keep = false;
        boolean dual = false;
        boolean policy = false;
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            String name = a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
            switch (name) {
                case "-h", "--help" -> {
                    return new DemoArgs(o, false, true, false);
                }
                case "--keep" -> keep = true;
                case "--dual-stack" -> dual = true;
                case "--network-policy" -> policy = true;
                case "--nodes" -> o = o.withNodes(number(name, value(args, i, a)));
                case "--mode" -> o = o.withMode(Mode.parse(value(args, i, a)));
                case "--backend" -> o = o.withBackend(backend(value(args, i, a)));
                default -> throw new IllegalArgumentException("unknown option: " + a);
            }
            if (!a.contains("=") && !name.equals("--keep") && !name.equals("--dual-stack") && !name.equals("--network-policy")) {
                i++;
            }
        }
        if (dual) {
            if (o.backendType().equals("udp")) {
                throw new IllegalArgumentException("--dual-stack: the udp backend is IPv4 only");
            }
            o = o.withDualStack(ClusterOptions.DEFAULT_IPV6_NETWORK);
        }
        if (policy) {
            if (o.mode() != Mode.KUBE) {
                throw new IllegalArgumentException("--network-policy: needs --mode kube (the policies come through the Kubernetes API)");
            }
            o = o.withDaemonEnv(java.util.Map.of("FLANNELD_NETWORK_POLICY", "true"));
        }
        return new DemoArgs(o, keep, false, policy);
    }

    private static String value(List<String> args, int i, String a) {
        if (a.contains("=")) {
            return a.substring(a.indexOf('=') + 1);
        }
        if (i + 1 >= args.size()) {
            throw new IllegalArgumentException(a + ": missing value");
        }
        return args.get(i + 1);
    }

    private static int number(String name, String v) {
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": expected a number, got \"" + v + "\"");
        }
    }

    private static String backend(String v) {
        if (v.equals("ipsec")) { // upstream's backend needs a pre-shared key of at least 96 characters: a fresh one per demo
            byte[] key = new byte[48];
            new java.security.SecureRandom().nextBytes(key);
            return "{\"Type\":\"ipsec\",\"PSK\":\"" + java.util.HexFormat.of().formatHex(key) + "\"}";
        }
        if (!v.equals("vxlan") && !v.equals("udp") && !v.equals("host-gw") && !v.equals("wireguard") && !v.equals("ipip")) {
            throw new IllegalArgumentException("--backend: expected vxlan, udp, host-gw, wireguard, ipip or ipsec, got \"" + v + "\"");
        }
        return v;
    }
}
