package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jflannel.netpol.Protocol;

/**
 * One upstream case on a {@link NetpolModel}: its policies created through the API, and each of its
 * {@code ValidateOrFail}s checked twice over: upstream's stated expectation ({@link UpstreamTruth}, on the case's
 * own pods, port and protocol) must equal the spec oracle's ({@code Spec}), and the kernel's whole truth table
 * (all 9 pods, TCP and UDP, 80 and 81) must become the oracle's within the bound.
 */
final class NetpolCaseRun {
    private final NetpolModel model;
    private final String name;
    private final List<String> pods;
    private int step;

    NetpolCaseRun(NetpolModel model, String name, List<String> pods) {
        this.model = model;
        this.name = name;
        this.pods = List.copyOf(pods);
    }

    /** Creates or replaces policy {@code name} in {@code ns}, {@code spec} its spec in YAML (flow style). */
    void policy(String ns, String policyName, String spec) throws Exception {
        model.policy("metadata: {name: " + policyName + ", namespace: " + ns + "}\nspec: " + spec);
    }

    void deletePolicies() throws Exception {
        model.reset();
    }

    void relabelPod(String id, Map<String, String> extra) throws Exception {
        model.relabelPod(id, extra);
    }

    void labelNamespace(String ns, Map<String, String> extra) throws Exception {
        model.labelNamespace(ns, extra);
    }

    UpstreamTruth tcp(int port) {
        return UpstreamTruth.on(Protocol.TCP, port, pods);
    }

    UpstreamTruth udp(int port) {
        return UpstreamTruth.on(Protocol.UDP, port, pods);
    }

    /** The pod's address as a host prefix (/32 or /128), as upstream's ipBlock cases build it. */
    String hostCidr(String id) {
        return model.ip(id) + (model.ip(id).contains(":") ? "/128" : "/32");
    }

    /** upstream's {@code makeLargeCIDRForIP}: the /4 holding the pod's address. */
    String largeCidr(String id) throws Exception {
        byte[] b = InetAddress.getByName(model.ip(id)).getAddress();
        byte[] net = new byte[b.length];
        net[0] = (byte) (b[0] & 0xF0);
        return InetAddress.getByAddress(net).getHostAddress().replaceAll("(^|:)(0:)+0$", "::") + "/4";
    }

    /** One {@code ValidateOrFail} (or several on other ports of the same state). */
    void validate(UpstreamTruth... upstream) throws Exception {
        step++;
        Map<ProbeMatrix.Probe, Boolean> spec = model.specTruth();
        Map<ProbeMatrix.Probe, String> disagree = new LinkedHashMap<>();
        for (UpstreamTruth u : upstream) {
            u.table().forEach((p, v) -> {
                if (!v.equals(spec.get(p))) {
                    disagree.put(p, "upstream " + v + ", spec " + spec.get(p));
                }
            });
        }
        assertThat(disagree).as("%s, step %d: upstream's expectation and the spec oracle", name, step).isEmpty();
        model.probes().await(name + " (" + model.family() + ", step " + step + ")", spec);
    }
}
