package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jflannel.netpol.Addr;
import org.jflannel.netpol.ClusterState;
import org.jflannel.netpol.Endpoint;
import org.jflannel.netpol.PodInfo;
import org.jflannel.netpol.Protocol;
import org.jflannel.netpol.Spec;
import org.jflannel.netpol.kube.ApiObjects;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testsupport.cluster.ClusterNames;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.Pod;
import org.jflannel.testsupport.netns.Reachability;

/**
 * Upstream's NetworkPolicy e2e model on a {@link NetnsCluster} of 3 nodes × 3 pods: pods a, b, c in namespaces
 * x, y, z (labels {@code pod=a}; namespaces {@code ns=x} and {@code kubernetes.io/metadata.name=x}), each
 * published as a Pod object with upstream's named ports ({@code serve-80-tcp}, ..., {@code serve-81-udp}) and
 * serving TCP 80, 81 and a UDP echo on 80, 81. Node k holds pods a and b of the k-th namespace and pod c of
 * another, so every truth table has same-node pairs (through cni0) and cross-node pairs (through the backend).
 * The kernel's truth is measured by {@link ProbeMatrix}; the spec's ({@link Spec}, on the objects as published)
 * is what it must become.
 */
final class NetpolModel implements AutoCloseable {
    static final List<String> NAMESPACES = List.of("x", "y", "z");
    static final List<String> NAMES = List.of("a", "b", "c");
    static final List<Protocol> PROTOCOLS = List.of(Protocol.TCP, Protocol.UDP);
    static final List<Integer> PORTS = List.of(80, 81);

    private final NetnsCluster cluster;
    private final Pod.Family family;
    private final Map<String, Pod> harness = new LinkedHashMap<>();
    private final Map<String, InetAddress> addrs = new LinkedHashMap<>();
    private final Map<String, PodInfo> pods = new LinkedHashMap<>();
    private final Map<String, Map<String, String>> namespaces = new TreeMap<>();
    private final Map<String, NetworkPolicy> policies = new TreeMap<>();
    private final List<AutoCloseable> servers = new ArrayList<>();
    private final ProbeMatrix probes;

    private NetpolModel(NetnsCluster cluster, Pod.Family family) {
        this.cluster = cluster;
        this.family = family;
        this.probes = new ProbeMatrix(this);
    }

    /** Publishes the namespaces and the 9 pods of the cluster (3 nodes, 3 pods each) and starts their servers. */
    static NetpolModel publish(NetnsCluster cluster, Pod.Family family) throws Exception {
        NetpolModel m = new NetpolModel(cluster, family);
        try {
            m.publishAll();
        } catch (Exception | Error e) {
            m.close();
            throw e;
        }
        return m;
    }

    private void publishAll() throws Exception {
        assertThat(cluster.pods()).as("pods of the cluster: 3 nodes × 3").hasSize(9);
        for (String ns : NAMESPACES) {
            labelNamespace(ns, Map.of());
        }
        for (Pod p : cluster.pods()) {
            int node = p.node() - 1;
            int slot = (int) cluster.pods().stream().filter(q -> q.node() == p.node()).takeWhile(q -> q != p).count();
            String id = slot < 2 ? NAMESPACES.get(node) + "/" + NAMES.get(slot) : NAMESPACES.get((node + 2) % 3) + "/c";
            harness.put(id, p);
            addrs.put(id, InetAddress.getByName(p.address(family))); // a literal: no lookup
        }
        assertThat(harness).as("x/a..z/c each on one harness pod").hasSize(9);
        for (String id : harness.keySet()) {
            relabelPod(id, Map.of());
            try (NetNs n = NetNs.open(harness.get(id).namespace())) {
                servers.addAll(Reachability.tcpListeners(n, 80, 81));
                servers.add(Reachability.udpEcho(n, 80));
                servers.add(Reachability.udpEcho(n, 81));
            }
        }
        System.out.println("netpol model: " + layout());
    }

    /** Which pods each node holds, for the log. */
    String layout() {
        Map<Integer, List<String>> byNode = new TreeMap<>();
        harness.forEach((id, p) -> byNode.computeIfAbsent(p.node(), k -> new ArrayList<>()).add(id + " " + p.address(family)));
        return byNode.toString();
    }

    Pod.Family family() {
        return family;
    }

    NetnsCluster cluster() {
        return cluster;
    }

    /** The pod ids, {@code x/a} .. {@code z/c}, in that order. */
    List<String> ids() {
        List<String> all = new ArrayList<>();
        for (String ns : NAMESPACES) {
            for (String n : NAMES) {
                all.add(ns + "/" + n);
            }
        }
        return all;
    }

    Pod harnessPod(String id) {
        return harness.get(id);
    }

    /** The address of the model's family of pod {@code id}. */
    String ip(String id) {
        return harness.get(id).address(family);
    }

    InetAddress inet(String id) {
        return addrs.get(id);
    }

    /** Labels pod {@code id} with {@code pod=<name>} and {@code extra} (replacing what it had), through the API. */
    void relabelPod(String id, Map<String, String> extra) throws Exception {
        Pod p = harness.get(id);
        String ns = id.substring(0, 1);
        String name = id.substring(2);
        Map<String, String> labels = new TreeMap<>(extra);
        labels.put("pod", name);
        List<String> ips = p.ipv6() == null ? List.of(p.ip()) : List.of(p.ip(), p.ipv6());
        var status = new PodBuilder().withNewStatus().withPhase("Running").withPodIP(p.ip());
        for (String ip : ips) {
            status = status.addNewPodIP(ip);
        }
        io.fabric8.kubernetes.api.model.Pod obj = status.endStatus().withNewMetadata().withName(name).withNamespace(ns)
                .withLabels(labels).endMetadata()
                .withNewSpec().withNodeName(ClusterNames.nodeName(p.node())).addNewContainer().withName("cont").withImage("none")
                .addNewPort().withName("serve-80-tcp").withContainerPort(80).withProtocol("TCP").endPort()
                .addNewPort().withName("serve-81-tcp").withContainerPort(81).withProtocol("TCP").endPort()
                .addNewPort().withName("serve-80-udp").withContainerPort(80).withProtocol("UDP").endPort()
                .addNewPort().withName("serve-81-udp").withContainerPort(81).withProtocol("UDP").endPort()
                .endContainer().endSpec().build();
        apply(obj);
        PodInfo info = ApiObjects.pod(obj);
        assertThat(info.ips()).as("%s addresses as flanneld reads them", id).hasSize(ips.size()).contains(Addr.parse(ip(id)));
        pods.put(id, info);
    }

    /** Labels namespace {@code ns} with {@code ns=<ns>}, its name label and {@code extra} (replacing what it had). */
    void labelNamespace(String ns, Map<String, String> extra) throws Exception {
        Map<String, String> all = new TreeMap<>(extra);
        all.put("ns", ns);
        all.put("kubernetes.io/metadata.name", ns);
        apply(new NamespaceBuilder().withNewMetadata().withName(ns).withLabels(all).endMetadata().build());
        namespaces.put(ns, all);
    }

    /** Creates (or replaces, by namespace and name) a NetworkPolicy given as YAML. */
    void policy(String yaml) throws Exception {
        NetworkPolicy np = Serialization.unmarshal(yaml, NetworkPolicy.class);
        np.setApiVersion("networking.k8s.io/v1");
        np.setKind("NetworkPolicy");
        ApiObjects.policy(np); // what flanneld reads must read
        apply(np);
        policies.put(np.getMetadata().getNamespace() + "/" + np.getMetadata().getName(), np);
    }

    /** Deletes every policy, gives every pod and namespace its base labels back. */
    void reset() throws Exception {
        for (NetworkPolicy np : policies.values()) {
            cluster.deleteKubeObject(Serialization.asJson(np));
        }
        policies.clear();
        for (String ns : NAMESPACES) {
            if (namespaces.get(ns).size() != 2) {
                labelNamespace(ns, Map.of());
            }
        }
        for (String id : ids()) {
            if (pods.get(id).labels().size() != 1) {
                relabelPod(id, Map.of());
            }
        }
    }

    /** What the spec allows now, for every ordered pair of distinct pods, both protocols, both ports. */
    Map<ProbeMatrix.Probe, Boolean> specTruth() {
        return specTruth(PROTOCOLS, PORTS);
    }

    Map<ProbeMatrix.Probe, Boolean> specTruth(List<Protocol> protocols, List<Integer> ports) {
        ClusterState s = new ClusterState(new ArrayList<>(pods.values()), namespaces,
                policies.values().stream().map(ApiObjects::policy).toList());
        Map<ProbeMatrix.Probe, Boolean> t = new LinkedHashMap<>();
        for (Protocol proto : protocols) {
            for (int port : ports) {
                for (String from : ids()) {
                    for (String to : ids()) {
                        if (!from.equals(to)) {
                            t.put(new ProbeMatrix.Probe(from, to, proto, port), Spec.allows(s, endpoint(from), endpoint(to), proto, port));
                        }
                    }
                }
            }
        }
        return t;
    }

    private Endpoint endpoint(String id) {
        return Endpoint.of(pods.get(id), Addr.parse(ip(id)));
    }

    ProbeMatrix probes() {
        return probes;
    }

    private void apply(HasMetadata obj) throws Exception {
        cluster.applyKubeObject(Serialization.asJson(obj));
    }

    @Override
    public void close() throws Exception {
        for (AutoCloseable s : servers) {
            s.close();
        }
        servers.clear();
    }
}
