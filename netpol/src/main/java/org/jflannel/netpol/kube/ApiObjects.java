package org.jflannel.netpol.kube;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.networking.v1.IPBlock;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicySpec;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jflannel.netpol.Addr;
import org.jflannel.netpol.Cidr;
import org.jflannel.netpol.LabelSelector;
import org.jflannel.netpol.PodInfo;
import org.jflannel.netpol.Policy;
import org.jflannel.netpol.PolicyPeer;
import org.jflannel.netpol.PolicyPort;
import org.jflannel.netpol.PolicyRule;
import org.jflannel.netpol.Protocol;

/**
 * The API's objects read into the policy records. A NetworkPolicy that cannot be represented fails with
 * the field's path in the message ({@code spec.ingress[0].from[1].ipBlock.cidr: not a CIDR: "10.0.0.0"}),
 * so it can be reported while the others are enforced. A Pod's unreadable parts are dropped (a bad
 * address, a port of an unknown protocol), since the pod's other facts still matter to the policies.
 */
public final class ApiObjects {
    private ApiObjects() {
    }

    public static Policy policy(NetworkPolicy np) {
        String ns = np.getMetadata() == null ? null : np.getMetadata().getNamespace();
        String name = np.getMetadata() == null ? null : np.getMetadata().getName();
        NetworkPolicySpec spec = np.getSpec() == null ? new NetworkPolicySpec() : np.getSpec();
        LabelSelector pods = selector("spec.podSelector", spec.getPodSelector());
        List<PolicyRule> ingress = new ArrayList<>();
        List<NetworkPolicyIngressRule> in = spec.getIngress() == null ? List.of() : spec.getIngress();
        for (int i = 0; i < in.size(); i++) {
            NetworkPolicyIngressRule r = in.get(i) == null ? new NetworkPolicyIngressRule() : in.get(i);
            ingress.add(rule("spec.ingress[" + i + "]", "from", r.getFrom(), r.getPorts()));
        }
        List<PolicyRule> egress = new ArrayList<>();
        List<NetworkPolicyEgressRule> out = spec.getEgress() == null ? List.of() : spec.getEgress();
        for (int i = 0; i < out.size(); i++) {
            NetworkPolicyEgressRule r = out.get(i) == null ? new NetworkPolicyEgressRule() : out.get(i);
            egress.add(rule("spec.egress[" + i + "]", "to", r.getTo(), r.getPorts()));
        }
        List<String> types = spec.getPolicyTypes();
        if (types == null || types.isEmpty()) {
            return Policy.defaulted(ns, name, pods, ingress, egress);
        }
        boolean isolatesIngress = false;
        boolean isolatesEgress = false;
        for (int i = 0; i < types.size(); i++) {
            String t = types.get(i);
            if ("Ingress".equals(t)) {
                isolatesIngress = true;
            } else if ("Egress".equals(t)) {
                isolatesEgress = true;
            } else {
                throw new IllegalArgumentException("spec.policyTypes[" + i + "]: expected Ingress or Egress, got \"" + t + "\"");
            }
        }
        return new Policy(ns, name, pods, isolatesIngress, isolatesEgress, ingress, egress);
    }

    private static PolicyRule rule(String field, String peersName, List<NetworkPolicyPeer> peers, List<NetworkPolicyPort> ports) {
        List<PolicyPeer> ps = new ArrayList<>();
        List<NetworkPolicyPeer> pl = peers == null ? List.of() : peers;
        for (int j = 0; j < pl.size(); j++) {
            ps.add(peer(field + "." + peersName + "[" + j + "]", pl.get(j) == null ? new NetworkPolicyPeer() : pl.get(j)));
        }
        List<PolicyPort> pts = new ArrayList<>();
        List<NetworkPolicyPort> portList = ports == null ? List.of() : ports;
        for (int k = 0; k < portList.size(); k++) {
            pts.add(port(field + ".ports[" + k + "]", portList.get(k) == null ? new NetworkPolicyPort() : portList.get(k)));
        }
        return new PolicyRule(ps, pts);
    }

    private static PolicyPeer peer(String field, NetworkPolicyPeer p) {
        try {
            IPBlock b = p.getIpBlock();
            PolicyPeer.IpBlock block = null;
            if (b != null) {
                Cidr cidr = Cidr.parse(field + ".ipBlock.cidr", b.getCidr() == null ? "" : b.getCidr());
                List<Cidr> except = new ArrayList<>();
                List<String> ex = b.getExcept() == null ? List.of() : b.getExcept();
                for (int i = 0; i < ex.size(); i++) {
                    except.add(Cidr.parse(field + ".ipBlock.except[" + i + "]", ex.get(i) == null ? "" : ex.get(i)));
                }
                block = new PolicyPeer.IpBlock(cidr, except);
            }
            LabelSelector pods = p.getPodSelector() == null ? null : selector(field + ".podSelector", p.getPodSelector());
            LabelSelector nss = p.getNamespaceSelector() == null ? null : selector(field + ".namespaceSelector", p.getNamespaceSelector());
            return new PolicyPeer(pods, nss, block);
        } catch (IllegalArgumentException e) {
            throw e.getMessage().startsWith(field) ? e : new IllegalArgumentException(field + ": " + e.getMessage(), e);
        }
    }

    private static PolicyPort port(String field, NetworkPolicyPort p) {
        Protocol protocol = Protocol.parse(field + ".protocol", p.getProtocol());
        IntOrString port = p.getPort();
        try {
            if (port == null || (port.getIntVal() == null && port.getStrVal() == null)) {
                if (p.getEndPort() != null) {
                    throw new IllegalArgumentException("endPort: needs a numeric port, got none");
                }
                return PolicyPort.all(protocol);
            }
            if (port.getIntVal() != null) {
                return new PolicyPort(protocol, port.getIntVal(), null, p.getEndPort());
            }
            return new PolicyPort(protocol, null, port.getStrVal(), p.getEndPort());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(field + "." + e.getMessage(), e);
        }
    }

    /** A metav1.LabelSelector; null (absent) is the empty selector, which selects everything. */
    static LabelSelector selector(String field, io.fabric8.kubernetes.api.model.LabelSelector s) {
        if (s == null) {
            return LabelSelector.ALL;
        }
        Map<String, String> labels = s.getMatchLabels() == null ? Map.of() : s.getMatchLabels();
        List<LabelSelector.Requirement> reqs = new ArrayList<>();
        List<LabelSelectorRequirement> exprs = s.getMatchExpressions() == null ? List.of() : s.getMatchExpressions();
        for (int i = 0; i < exprs.size(); i++) {
            LabelSelectorRequirement r = exprs.get(i);
            Set<String> values = r.getValues() == null ? Set.of() : new HashSet<>(r.getValues());
            reqs.add(LabelSelector.Requirement.of(field + ".matchExpressions[" + i + "]", r.getKey(), r.getOperator(), values));
        }
        return new LabelSelector(labels, reqs);
    }

    /** What policy needs of a pod; an address or port that cannot be read is left out. */
    public static PodInfo pod(Pod p) {
        var meta = p.getMetadata();
        var spec = p.getSpec();
        var status = p.getStatus();
        Set<Addr> ips = new LinkedHashSet<>();
        if (status != null) {
            if (status.getPodIPs() != null) {
                for (PodIP ip : status.getPodIPs()) {
                    addIp(ips, ip == null ? null : ip.getIp());
                }
            }
            addIp(ips, status.getPodIP());
        }
        List<PodInfo.NamedPort> ports = new ArrayList<>();
        if (spec != null && spec.getContainers() != null) {
            for (Container c : spec.getContainers()) {
                for (ContainerPort cp : c.getPorts() == null ? List.<ContainerPort>of() : c.getPorts()) {
                    if (cp.getName() == null || cp.getName().isEmpty() || cp.getContainerPort() == null) {
                        continue;
                    }
                    try {
                        ports.add(new PodInfo.NamedPort(cp.getName().intern(), Protocol.parse("protocol", cp.getProtocol()), cp.getContainerPort()));
                    } catch (IllegalArgumentException e) {
                        // a port we cannot match on: no policy can name it
                    }
                }
            }
        }
        String phase = status == null ? null : status.getPhase();
        boolean ended = "Succeeded".equals(phase) || "Failed".equals(phase);
        // namespaces, nodes, label keys and values and port names repeat across a cluster's pods: one copy of each
        return new PodInfo(intern(meta.getNamespace()), meta.getName(), interned(meta.getLabels()), List.copyOf(ips),
                spec == null ? null : intern(spec.getNodeName()), spec != null && Boolean.TRUE.equals(spec.getHostNetwork()), ports, ended);
    }

    private static String intern(String s) {
        return s == null ? null : s.intern();
    }

    private static Map<String, String> interned(Map<String, String> labels) {
        if (labels == null || labels.isEmpty()) {
            return Map.of();
        }
        Map<String, String> out = new java.util.TreeMap<>();
        labels.forEach((k, v) -> out.put(intern(k), intern(v)));
        return out;
    }

    private static void addIp(Set<Addr> ips, String ip) {
        if (ip == null || ip.isEmpty()) {
            return;
        }
        try {
            ips.add(Addr.parse(ip));
        } catch (RuntimeException e) {
            // not an address: the pod has no usable address of that kind
        }
    }
}
