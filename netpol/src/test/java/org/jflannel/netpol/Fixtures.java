package org.jflannel.netpol;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** Small builders for tests. */
final class Fixtures {
    private Fixtures() {
    }

    static PodInfo pod(String ns, String name, String node, String ip, Map<String, String> labels, PodInfo.NamedPort... ports) {
        return new PodInfo(ns, name, labels, List.of(Addr.parse(ip)), node, false, Arrays.asList(ports), false);
    }

    static PodInfo dualPod(String ns, String name, String node, String ip4, String ip6, Map<String, String> labels) {
        return new PodInfo(ns, name, labels, List.of(Addr.parse(ip4), Addr.parse(ip6)), node, false, List.of(), false);
    }

    static Endpoint at(PodInfo p) {
        return Endpoint.of(p, p.ips().get(0));
    }

    static Endpoint at(PodInfo p, int i) {
        return Endpoint.of(p, p.ips().get(i));
    }

    static LabelSelector sel(String... kv) {
        java.util.Map<String, String> m = new java.util.TreeMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return LabelSelector.of(m);
    }

    static PolicyRule from(List<PolicyPeer> peers, PolicyPort... ports) {
        return new PolicyRule(peers, Arrays.asList(ports));
    }

    static Policy ingress(String ns, String name, LabelSelector pods, PolicyRule... rules) {
        return new Policy(ns, name, pods, true, false, Arrays.asList(rules), List.of());
    }

    static Policy egress(String ns, String name, LabelSelector pods, PolicyRule... rules) {
        return new Policy(ns, name, pods, false, true, List.of(), Arrays.asList(rules));
    }

    static ClusterState state(List<PodInfo> pods, List<Policy> policies) {
        Map<String, Map<String, String>> ns = new java.util.TreeMap<>();
        for (PodInfo p : pods) {
            ns.putIfAbsent(p.namespace(), Map.of("kubernetes.io/metadata.name", p.namespace(), "team", p.namespace()));
        }
        return new ClusterState(pods, ns, policies);
    }
}
