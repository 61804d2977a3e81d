package org.jflannel.testsupport.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.jflannel.core.Ip4Net;
import org.jflannel.testsupport.kube.ApiCall;
import org.jflannel.testsupport.kube.KubeMockServer;
import org.jflannel.testsupport.manifests.RenderedManifests;

/**
 * kube-flannel's DaemonSet, as rendered from {@code manifests/}, on N fake nodes of this machine:
 * each node a network namespace on the harness's fabric (with a default route, as a real host has)
 * and a {@link FakeHost} directory; on each, the pod spec run from the unpacked image by
 * {@link PodRunner} (init containers, then {@code kube-flannel}). In Kubernetes mode (the pod runs
 * {@code --kube-subnet-mgr}) the API is the test-support mock server, holding one Node per node
 * with its podCIDR and one Pod per node (so flanneld finds its node name from POD_NAME as in a real
 * cluster), reached in-cluster style over TLS at 127.0.0.1:6443 with a service-account token and
 * CA; otherwise a real etcd on the fabric, its endpoint set in ConfigMap kube-flannel-etcd as an
 * operator would, and net-conf.json put under the prefix as docs/installing.md says. Pods are then
 * attached on each node through the installed plugin and conflist ({@link HostSideCni}).
 * {@link #close()} kills what it started by PID, deletes its namespaces and its run directory.
 */
public final class DaemonSetCluster implements AutoCloseable {
    public static final String NAMESPACE = "kube-flannel";
    public static final int API_PORT = 6443;
    static final String ADMIN_AGENT = "jflannel-test-admin";
    private static final Duration READY_WITHIN = Duration.ofSeconds(120);

    /**
     * One fake node: its namespace, host directory, flannel pod (made from {@code manifests}, the
     * {@code generation}-th on this node, 1 at start) and the runtime's side.
     */
    public record Node(int index, String name, String namespace, FakeHost host, PodRunner pod, ManagedProcess daemon,
                       HostSideCni cni, RenderedManifests manifests, int generation) {
        /** The flannel pod's name, as the DaemonSet controller would make it. */
        String podName(String runId) {
            return DaemonSetCluster.podName(runId, index, generation);
        }
    }

    /** What a probe got: status and body. */
    public record Probe(int status, String body) {
    }

    private final RenderedManifests manifests;
    private final UnpackedImage image;
    private final java.util.function.Function<Container, UnpackedImage> images;
    private final ClusterRun run;
    private final ClusterNames names;
    private final Path runDir;
    private final Topology topology;
    private final Consumer<String> progress;
    private final List<Node> nodes = new ArrayList<>();
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private KubeMockServer api;
    private ApiServerTls tls;
    private KubernetesClient admin;
    private Path serviceAccountDir;

    private DaemonSetCluster(RenderedManifests manifests, UnpackedImage image,
                             java.util.function.Function<Container, UnpackedImage> images, ClusterRun run) {
        this.manifests = manifests;
        this.image = image;
        this.images = images;
        this.run = run;
        this.names = run.names();
        this.runDir = run.runDir();
        this.topology = run.topology();
        this.progress = run::progress;
        run.teardownFirst(this::tearDown);
    }

    /** Builds the nodes, runs the DaemonSet's pod on each, waits for readiness, attaches {@code podsPerNode} pods per node. */
    public static DaemonSetCluster start(RenderedManifests manifests, UnpackedImage image, Path runBase, int nodeCount,
                                         int podsPerNode, Consumer<String> progress) throws Exception {
        return start(manifests, image, Map.of(), runBase, nodeCount, podsPerNode, progress);
    }

    /**
     * As {@link #start(RenderedManifests, UnpackedImage, Path, int, int, Consumer)}, with a container whose
     * {@code image:} is a key of {@code byImage} run from that image instead (e.g. upstream's plugin image).
     */
    public static DaemonSetCluster start(RenderedManifests manifests, UnpackedImage image, Map<String, UnpackedImage> byImage,
                                         Path runBase, int nodeCount, int podsPerNode, Consumer<String> progress)
            throws Exception {
        Map<String, UnpackedImage> images = Map.copyOf(byImage);
        DaemonSetCluster c = new DaemonSetCluster(manifests, image,
                container -> images.getOrDefault(String.valueOf(container.getImage()), image),
                ClusterRun.open("daemonset cluster", runBase, progress));
        c.run.boot(() -> c.boot(nodeCount, podsPerNode));
        return c;
    }

    public PodSpec podSpec() {
        return manifests.daemonSet().getSpec().getTemplate().getSpec();
    }

    public boolean kubeMode() {
        return kubeMode(manifests);
    }

    private static boolean kubeMode(RenderedManifests m) {
        return flannelContainer(m).getArgs().contains("--kube-subnet-mgr");
    }

    private static Container flannelContainer(RenderedManifests m) {
        return m.daemonSet().getSpec().getTemplate().getSpec().getContainers().stream()
                .filter(c -> c.getName().equals("kube-flannel")).findFirst()
                .orElseThrow(() -> new IllegalStateException(m.source() + ": DaemonSet has no container kube-flannel"));
    }

    /** Whether kube-flannel has a readiness probe (upstream's v0.20.2 manifest has none, nor a healthz port). */
    public boolean hasProbes() {
        return hasProbes(manifests);
    }

    /** Whether node {@code n}'s flannel pod (the manifests it was made from) has a readiness probe. */
    public boolean hasProbes(Node n) {
        return hasProbes(n.manifests());
    }

    private static boolean hasProbes(RenderedManifests m) {
        Container c = flannelContainer(m);
        return c.getReadinessProbe() != null && c.getReadinessProbe().getHttpGet() != null;
    }

    /** The port the readiness probe hits (a named containerPort resolved), as kubelet would. */
    public int probePort() {
        return probePort(manifests);
    }

    /** The readiness probe's port of node {@code n}'s flannel pod. */
    public int probePort(Node n) {
        return probePort(n.manifests());
    }

    private static int probePort(RenderedManifests m) {
        Container c = flannelContainer(m);
        if (!hasProbes(m)) {
            throw new IllegalStateException(m.source() + ": kube-flannel has no readiness probe");
        }
        HTTPGetAction get = c.getReadinessProbe().getHttpGet();
        if (get.getPort().getIntVal() != null) {
            return get.getPort().getIntVal();
        }
        return c.getPorts().stream().filter(p -> get.getPort().getStrVal().equals(p.getName()))
                .map(ContainerPort::getContainerPort).findFirst()
                .orElseThrow(() -> new IllegalStateException("no containerPort named " + get.getPort().getStrVal()));
    }

    private void boot(int nodeCount, int podsPerNode) throws Exception {
        progress.accept("run " + names.id() + ": " + nodeCount + " nodes from " + manifests.source() + ", "
                + (kubeMode() ? "kube" : "etcd") + " mode, image rootfs " + image.rootfs());
        topology.build(nodeCount);
        for (int i = 1; i <= nodeCount; i++) {
            Cmd.run(Duration.ofSeconds(10), List.of("ip", "-n", names.node(i), "route", "add", "default", "via",
                    ClusterNames.fabricIp())).orThrow();
        }
        List<ConfigMap> configMaps = new ArrayList<>(manifests.all(ConfigMap.class));
        List<Secret> secrets = manifests.all(Secret.class);
        if (kubeMode()) {
            api = KubeMockServer.start();
            toClose.add(api);
            admin = adminClient(api);
            toClose.add(admin);
            tls = ApiServerTls.create(runDir.resolve("apiserver"));
            serviceAccountDir = serviceAccountDir(tls);
            progress.accept("kube-api: mock API server at " + api.url() + ", TLS at 127.0.0.1:" + API_PORT + " on every node");
        } else {
            configMaps = etcdConfigured(configMaps);
        }
        Ip4Net network = Ip4Net.parse(netConfNetwork(configMaps));
        for (int i = 1; i <= nodeCount; i++) {
            nodes.add(startNode(i, network, configMaps, secrets));
        }
        for (Node n : nodes) {
            awaitReady(n, null);
            progress.accept(n.name() + (hasProbes() ? ": /readyz 200 on port " + probePort() : ": subnet.env written (no probe)")
                    + ", " + subnetEnv(n).get("FLANNEL_SUBNET"));
        }
        for (Node n : nodes) {
            for (int j = 1; j <= podsPerNode; j++) {
                run.attachPod(n.index(), j, ns -> HostSideCni.ipv4(n.cni().add(ns)), "the installed /opt/cni/bin/flannel");
            }
        }
    }

    private Node startNode(int i, Ip4Net network, List<ConfigMap> configMaps, List<Secret> secrets) throws Exception {
        String name = ClusterNames.nodeName(i);
        if (admin != null) {
            admin.nodes().resource(KubeApiServerMain.node(name, network.subnet(24, i - 1).toString(), ClusterNames.nodeIp(i)))
                    .create();
            toClose.add(TlsRelay.inNamespace(topology.node(i), API_PORT, tls.context(), api.port()));
        }
        FakeHost host = FakeHost.create(runDir.resolve(name).resolve("host"));
        return runPod(i, host, manifests, images, configMaps, secrets, 1);
    }

    private static String podName(String runId, int index, int generation) {
        return "kube-flannel-ds-" + runId + index + (generation == 1 ? "" : "-" + generation);
    }

    /** Creates the flannel pod's Pod object (kube mode), runs its init containers, starts kube-flannel. */
    private Node runPod(int i, FakeHost host, RenderedManifests m, java.util.function.Function<Container, UnpackedImage> imgs,
                        List<ConfigMap> configMaps, List<Secret> secrets, int generation) throws Exception {
        String name = ClusterNames.nodeName(i);
        Path dir = runDir.resolve(name);
        PodSpec spec = m.daemonSet().getSpec().getTemplate().getSpec();
        String podName = podName(names.id(), i, generation);
        if (admin != null) {
            admin.pods().inNamespace(NAMESPACE).resource(new PodBuilder().withNewMetadata().withName(podName)
                    .withNamespace(NAMESPACE).endMetadata().withNewSpec().withNodeName(name)
                    .withServiceAccountName(spec.getServiceAccountName()).endSpec().build()).create();
        }
        Map<String, String> kubelet = Map.of("HOSTNAME", name, "KUBERNETES_SERVICE_HOST", "127.0.0.1",
                "KUBERNETES_SERVICE_PORT", Integer.toString(API_PORT), "KUBERNETES_SERVICE_PORT_HTTPS",
                Integer.toString(API_PORT), "KUBERNETES_PORT", "tcp://127.0.0.1:" + API_PORT);
        String suffix = generation == 1 ? "" : "-" + generation;
        PodRunner pod = new PodRunner(imgs, spec, new PodRunner.Identity(podName, NAMESPACE, name, ClusterNames.nodeIp(i)),
                names.node(i), host, dir.resolve("pod" + suffix), configMaps, secrets, kubelet, serviceAccountDir);
        List<PodRunner.InitRun> init = pod.runInitContainers();
        progress.accept(name + ": init containers done: " + init.stream()
                .map(r -> r.name() + " " + r.took().toMillis() + " ms").toList());
        ManagedProcess daemon = pod.start("kube-flannel", dir.resolve("kube-flannel" + suffix + ".log"));
        progress.accept(name + ": kube-flannel started pid=" + daemon.pid() + " (pod " + podName + ")");
        return new Node(i, name, names.node(i), host, pod, daemon, new HostSideCni(names.node(i), host), m, generation);
    }

    /**
     * One node's step of a DaemonSet rolling update (maxUnavailable 1), as the controller and kubelet
     * do it: the old flannel pod's Pod object deleted and its kube-flannel stopped (SIGTERM, SIGKILL
     * after 10 s), then a pod of {@code next}'s DaemonSet with {@code next}'s ConfigMaps and Secrets
     * (the operator applied them) on the same fake host: a new Pod object, init containers, kube-flannel,
     * readiness (its probe, or with none, subnet.env written anew). Each container runs from
     * {@code byImage.get(its image:)}, else {@code image}. The node's kernel state, host directories
     * and workload pods stay as they are: nothing else restarts in a rolling update. Kube mode only.
     */
    public Node rollPod(Node old, RenderedManifests next, UnpackedImage image, Map<String, UnpackedImage> byImage)
            throws Exception {
        if (api == null || !kubeMode(next)) {
            throw new IllegalStateException("rollPod: kube mode only (" + next.source() + ")");
        }
        Node current = nodes.get(old.index() - 1);
        if (current != old) {
            throw new IllegalArgumentException("rollPod: " + old.name() + " generation " + old.generation()
                    + " is not the running pod (generation " + current.generation() + ")");
        }
        Map<String, UnpackedImage> imgs = Map.copyOf(byImage);
        admin.pods().inNamespace(NAMESPACE).withName(old.podName(names.id())).delete();
        int exit = old.daemon().terminate();
        progress.accept(old.name() + ": kube-flannel of " + old.manifests().source() + " stopped, exit " + exit);
        SubnetEnvFile.Stamp before = subnetEnvFile(old).stamp();
        Node n = runPod(old.index(), old.host(), next, c -> imgs.getOrDefault(String.valueOf(c.getImage()), image),
                next.all(ConfigMap.class), next.all(Secret.class), old.generation() + 1);
        nodes.set(n.index() - 1, n);
        awaitReady(n, before);
        progress.accept(n.name() + (hasProbes(n) ? ": /readyz 200 on port " + probePort(n) : ": subnet.env written anew (no probe)")
                + ", " + subnetEnv(n).get("FLANNEL_SUBNET"));
        return n;
    }

    /** The subnet.env node {@code n}'s flanneld writes, in the fake host's /run/flannel. */
    private static SubnetEnvFile subnetEnvFile(Node n) {
        return new SubnetEnvFile(n.host().path("/run/flannel/subnet.env"));
    }

    private static KubernetesClient adminClient(KubeMockServer server) {
        try (KubernetesClient plain = server.newClient()) {
            return new KubernetesClientBuilder().withConfig(new ConfigBuilder(plain.getConfiguration())
                    .withUserAgent(ADMIN_AGENT).build()).build();
        }
    }

    /** token, ca.crt and namespace, as kubelet projects a service account into the pod. */
    private Path serviceAccountDir(ApiServerTls tls) throws IOException {
        Path d = Files.createDirectories(runDir.resolve("serviceaccount"));
        Files.writeString(d.resolve("token"), "jflannel-test-token-" + names.id(), StandardCharsets.UTF_8);
        Files.writeString(d.resolve("namespace"), NAMESPACE, StandardCharsets.UTF_8);
        Files.copy(tls.caPem(), d.resolve("ca.crt"));
        return d;
    }

    /**
     * etcd mode: a real etcd on the fabric; the operator's two steps of docs/installing.md: put
     * net-conf.json under the prefix, set the endpoints in ConfigMap kube-flannel-etcd.
     */
    private List<ConfigMap> etcdConfigured(List<ConfigMap> configMaps) throws Exception {
        FabricEtcd etcd = FabricEtcd.start(names.fabric(), runDir.resolve("etcd"));
        toClose.add(etcd::close);
        ConfigMap etcdCfg = configMaps.stream().filter(c -> c.getMetadata().getName().equals("kube-flannel-etcd")).findFirst()
                .orElseThrow(() -> new IllegalStateException(manifests.source() + ": etcd mode without ConfigMap kube-flannel-etcd"));
        String prefix = etcdCfg.getData().getOrDefault("prefix", FabricEtcd.PREFIX);
        etcd.put(prefix + "/config", netConf(configMaps));
        progress.accept("etcd: " + FabricEtcd.endpoint() + ", " + prefix + "/config = net-conf.json of kube-flannel-cfg");
        List<ConfigMap> out = new ArrayList<>();
        for (ConfigMap c : configMaps) {
            out.add(c == etcdCfg ? new ConfigMapBuilder(c).addToData("endpoints", FabricEtcd.endpoint()).build() : c);
        }
        return out;
    }

    private static String netConf(List<ConfigMap> configMaps) {
        return configMaps.stream().filter(c -> c.getMetadata().getName().equals("kube-flannel-cfg")).findFirst()
                .map(c -> c.getData().get("net-conf.json"))
                .orElseThrow(() -> new IllegalStateException("no net-conf.json in ConfigMap kube-flannel-cfg"));
    }

    private static String netConfNetwork(List<ConfigMap> configMaps) throws IOException {
        return new com.fasterxml.jackson.databind.ObjectMapper().readTree(netConf(configMaps)).path("Network").asText();
    }

    /** {@code staleSubnetEnv}: the stamp of a subnet.env an earlier pod wrote (null: none), not a sign of this one. */
    private void awaitReady(Node n, SubnetEnvFile.Stamp staleSubnetEnv) throws Exception {
        // without a probe, as kubelet: running is ready; the pods need the node's subnet.env
        Readiness.await("kube-flannel", n.name(), n.daemon(), READY_WITHIN, () -> hasProbes(n)
                ? Readiness.readyz(topology.node(n.index()), probePort(n)) : subnetEnvFile(n).writtenSince(staleSubnetEnv));
    }

    /** {@code GET path} on the probe port inside the node, as kubelet's httpGet probe of a hostNetwork pod. */
    public Probe probe(Node n, String path) throws Exception {
        NsHttp.Response r = NsHttp.get(topology.node(n.index()), "127.0.0.1", probePort(n), path);
        return new Probe(r.status(), r.body());
    }

    /** The node's subnet.env, as flanneld wrote it into the fake host's /run/flannel. */
    public Map<String, String> subnetEnv(Node n) throws IOException {
        return subnetEnvFile(n).read();
    }

    public List<Node> nodes() {
        return List.copyOf(nodes);
    }

    /** Node {@code i}'s running flannel pod (1-based). */
    public Node node(int i) {
        return nodes.get(i - 1);
    }

    /** Node {@code n}'s lease as its subnet.env says, with its underlay address as the public IP. */
    public NodeLease lease(Node n) throws IOException {
        return subnetEnvFile(n).lease(n.name(), Inet.parse(ClusterNames.nodeIp(n.index())));
    }

    /** The VXLAN device of node {@code n} and its neighbour, FDB and route entries, dumped now. */
    public FlannelEntries entries(Node n) throws Exception {
        return new NodeDevices(topology.node(n.index())).vxlan();
    }

    /** The IPv4 address on pod {@code p}'s {@code eth0} now ({@code 10.244.1.2/24}), as the pod sees it. */
    public String podAddress(Pod p) throws IOException, InterruptedException {
        Cmd.Result r = Cmd.run(Duration.ofSeconds(10), List.of("ip", "-n", p.namespace(), "-4", "-o", "addr", "show", "dev",
                "eth0")).orThrow();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("inet (\\S+)").matcher(r.stdout());
        return m.find() ? m.group(1) : "";
    }

    public List<Pod> pods() {
        return run.pods();
    }

    public String runId() {
        return names.id();
    }

    /** Every namespace this run made. */
    public List<String> namespaces() {
        return topology.namespaceNames();
    }

    /** Requests the mock API server received from flanneld (not the test's own), kube mode. */
    public List<ApiCall> apiCalls() {
        if (api == null) {
            throw new IllegalStateException("etcd mode: no API server");
        }
        return api.calls().stream().filter(c -> !c.userAgent().equals(ADMIN_AGENT)).toList();
    }

    /** A Node as the API server holds it (kube mode). */
    public JsonNode kubeNode(String name) throws IOException {
        if (admin == null) {
            throw new IllegalStateException("etcd mode: no API server");
        }
        return new com.fasterxml.jackson.databind.ObjectMapper().valueToTree(admin.nodes().withName(name).get());
    }

    /** One ICMP echo between two pods. */
    public boolean ping(Pod from, Pod to) throws IOException, InterruptedException {
        return PingMatrix.echo(from, to);
    }

    /** Every ordered pair of distinct pods, one echo each. */
    public PingMatrix pingMatrix() throws IOException, InterruptedException {
        return PingMatrix.measure(run.pods());
    }

    /** Ends the pods' processes by PID, then what this run started, deletes its namespaces and its run directory. */
    @Override
    public void close() throws Exception {
        run.close();
    }

    /** What this cluster started, ended before the run's namespaces go: each node's kube-flannel, then the rest, newest first. */
    private void tearDown(Cleanup cleanup) {
        for (Node n : nodes) {
            cleanup.attempt(() -> n.daemon().terminate());
        }
        for (int i = toClose.size() - 1; i >= 0; i--) {
            cleanup.attempt(toClose.get(i)::close);
        }
    }
}
