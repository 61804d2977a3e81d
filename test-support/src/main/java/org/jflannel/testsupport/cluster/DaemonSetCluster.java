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
import java.util.concurrent.atomic.AtomicBoolean;
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

    /** One fake node: its namespace, host directory, flannel pod and the runtime's side. */
    public record Node(int index, String name, String namespace, FakeHost host, PodRunner pod, ManagedProcess daemon,
                       HostSideCni cni) {
    }

    /** What a probe got: status and body. */
    public record Probe(int status, String body) {
    }

    private final RenderedManifests manifests;
    private final UnpackedImage image;
    private final java.util.function.Function<Container, UnpackedImage> images;
    private final ClusterNames names;
    private final Path runDir;
    private final Topology topology;
    private final Consumer<String> progress;
    private final List<Node> nodes = new ArrayList<>();
    private final List<Pod> pods = new ArrayList<>();
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread shutdownHook = new Thread(this::closeQuietly, "daemonset-cluster-cleanup");
    private KubeMockServer api;
    private ApiServerTls tls;

    private DaemonSetCluster(RenderedManifests manifests, UnpackedImage image,
                             java.util.function.Function<Container, UnpackedImage> images, ClusterNames names, Path runDir,
                             Consumer<String> progress) {
        this.manifests = manifests;
        this.names = names;
        this.image = image;
        this.images = images;
        this.runDir = runDir;
        this.topology = new Topology(names, runDir);
        this.progress = progress;
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
        StaleRuns.sweep(runBase, progress);
        ClusterNames names = ClusterNames.random();
        Path runDir = Files.createDirectories(runBase.resolve("jflannel-" + names.id()));
        StaleRuns.claim(runDir);
        DaemonSetCluster c = new DaemonSetCluster(manifests, image,
                container -> images.getOrDefault(String.valueOf(container.getImage()), image), names, runDir, progress);
        Runtime.getRuntime().addShutdownHook(c.shutdownHook);
        try {
            c.boot(nodeCount, podsPerNode);
        } catch (Exception | Error e) {
            progress.accept("start failed: " + e.getMessage() + " — cleaning up");
            c.closeQuietly();
            throw e;
        }
        return c;
    }

    public PodSpec podSpec() {
        return manifests.daemonSet().getSpec().getTemplate().getSpec();
    }

    public boolean kubeMode() {
        return flannelContainer().getArgs().contains("--kube-subnet-mgr");
    }

    private Container flannelContainer() {
        return podSpec().getContainers().stream().filter(c -> c.getName().equals("kube-flannel")).findFirst()
                .orElseThrow(() -> new IllegalStateException("DaemonSet has no container kube-flannel"));
    }

    /** Whether kube-flannel has a readiness probe (upstream's v0.20.2 manifest has none, nor a healthz port). */
    public boolean hasProbes() {
        return flannelContainer().getReadinessProbe() != null && flannelContainer().getReadinessProbe().getHttpGet() != null;
    }

    /** The port the readiness probe hits (a named containerPort resolved), as kubelet would. */
    public int probePort() {
        Container c = flannelContainer();
        if (!hasProbes()) {
            throw new IllegalStateException(manifests.source() + ": kube-flannel has no readiness probe");
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
        Path saDir = null;
        io.fabric8.kubernetes.client.KubernetesClient admin = null;
        if (kubeMode()) {
            api = KubeMockServer.start();
            toClose.add(api);
            admin = adminClient(api);
            toClose.add(admin);
            tls = ApiServerTls.create(runDir.resolve("apiserver"));
            saDir = serviceAccountDir(tls);
            progress.accept("kube-api: mock API server at " + api.url() + ", TLS at 127.0.0.1:" + API_PORT + " on every node");
        } else {
            configMaps = etcdConfigured(configMaps);
        }
        Ip4Net network = Ip4Net.parse(netConfNetwork(configMaps));
        for (int i = 1; i <= nodeCount; i++) {
            nodes.add(startNode(i, network, configMaps, secrets, saDir, admin));
        }
        for (Node n : nodes) {
            awaitReady(n);
            progress.accept(n.name() + (hasProbes() ? ": /readyz 200 on port " + probePort() : ": subnet.env written (no probe)")
                    + ", " + subnetEnv(n).get("FLANNEL_SUBNET"));
        }
        for (Node n : nodes) {
            for (int j = 1; j <= podsPerNode; j++) {
                String ns = names.pod(n.index(), j);
                topology.createPodNs(ns);
                String ip = HostSideCni.ipv4(n.cni().add(ns));
                pods.add(new Pod(n.name() + "/pod" + j, n.index(), ns, ip));
                progress.accept("pod " + n.name() + "/pod" + j + ": " + ip + " via the installed /opt/cni/bin/flannel");
            }
        }
    }

    private Node startNode(int i, Ip4Net network, List<ConfigMap> configMaps, List<Secret> secrets, Path saDir,
                           KubernetesClient admin) throws Exception {
        String name = ClusterNames.nodeName(i);
        String podName = "kube-flannel-ds-" + names.id() + i;
        Path dir = runDir.resolve(name);
        if (admin != null) {
            admin.nodes().resource(KubeApiServerMain.node(name, network.subnet(24, i - 1).toString(), ClusterNames.nodeIp(i)))
                    .create();
            admin.pods().inNamespace(NAMESPACE).resource(new PodBuilder().withNewMetadata().withName(podName)
                    .withNamespace(NAMESPACE).endMetadata().withNewSpec().withNodeName(name)
                    .withServiceAccountName(podSpec().getServiceAccountName()).endSpec().build()).create();
            toClose.add(TlsRelay.inNamespace(topology.node(i), API_PORT, tls.context(), api.port()));
        }
        FakeHost host = FakeHost.create(dir.resolve("host"));
        Map<String, String> kubelet = Map.of("HOSTNAME", name, "KUBERNETES_SERVICE_HOST", "127.0.0.1",
                "KUBERNETES_SERVICE_PORT", Integer.toString(API_PORT), "KUBERNETES_SERVICE_PORT_HTTPS",
                Integer.toString(API_PORT), "KUBERNETES_PORT", "tcp://127.0.0.1:" + API_PORT);
        PodRunner pod = new PodRunner(images, podSpec(), new PodRunner.Identity(podName, NAMESPACE, name, ClusterNames.nodeIp(i)),
                names.node(i), host, dir.resolve("pod"), configMaps, secrets, kubelet, saDir);
        pod.runInitContainers();
        progress.accept(name + ": init containers done: " + podSpec().getInitContainers().stream().map(Container::getName).toList());
        ManagedProcess daemon = pod.start("kube-flannel", dir.resolve("kube-flannel.log"));
        progress.accept(name + ": kube-flannel started pid=" + daemon.pid());
        return new Node(i, name, names.node(i), host, pod, daemon, new HostSideCni(names.node(i), host));
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

    private void awaitReady(Node n) throws Exception {
        Wait.until("kube-flannel ready on " + n.name(), READY_WITHIN, () -> {
            if (!n.daemon().isAlive()) {
                throw new Wait.Abort("kube-flannel on " + n.name() + " exited " + n.daemon().exitCode().orElse(-1)
                        + "; log tail:\n" + n.daemon().logTail(40));
            }
            if (!hasProbes()) { // as kubelet: running is ready; the pods need the node's subnet.env
                return Files.isRegularFile(n.host().path("/run/flannel/subnet.env"));
            }
            try {
                return probe(n, "/readyz").status() == 200;
            } catch (IOException notListening) {
                return false;
            }
        });
    }

    /** {@code GET path} on the probe port inside the node, as kubelet's httpGet probe of a hostNetwork pod. */
    public Probe probe(Node n, String path) throws Exception {
        NsHttp.Response r = NsHttp.get(topology.node(n.index()), "127.0.0.1", probePort(), path);
        return new Probe(r.status(), r.body());
    }

    /** The node's subnet.env, as flanneld wrote it into the fake host's /run/flannel. */
    public Map<String, String> subnetEnv(Node n) throws IOException {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        for (String line : Files.readAllLines(n.host().path("/run/flannel/subnet.env"), StandardCharsets.UTF_8)) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                out.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return out;
    }

    public List<Node> nodes() {
        return List.copyOf(nodes);
    }

    public List<Pod> pods() {
        return List.copyOf(pods);
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
        try (KubernetesClient admin = adminClient(api)) {
            return new com.fasterxml.jackson.databind.ObjectMapper().valueToTree(admin.nodes().withName(name).get());
        }
    }

    /** One ICMP echo between two pods. */
    public boolean ping(Pod from, Pod to) throws IOException, InterruptedException {
        return Cmd.run(Duration.ofSeconds(10), List.of("ip", "netns", "exec", from.namespace(), "ping", "-n", "-q", "-c",
                "1", "-W", "2", to.ip())).ok();
    }

    /** Every ordered pair of distinct pods, one echo each. */
    public PingMatrix pingMatrix() throws IOException, InterruptedException {
        List<PingMatrix.Result> results = new ArrayList<>();
        for (Pod from : pods) {
            for (Pod to : pods) {
                if (from != to) {
                    results.add(new PingMatrix.Result(from, to, ping(from, to)));
                }
            }
        }
        return new PingMatrix(pods, results);
    }

    private void closeQuietly() {
        try {
            close();
        } catch (Exception e) {
            System.err.println("daemonset cluster " + names.id() + ": cleanup failed: " + e);
        }
    }

    @Override
    public void close() throws Exception {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // inside the hook
        }
        Exception failure = null;
        for (Node n : nodes) {
            try {
                n.daemon().terminate();
            } catch (Exception e) {
                failure = add(failure, e);
            }
        }
        for (int i = toClose.size() - 1; i >= 0; i--) {
            try {
                toClose.get(i).close();
            } catch (Exception e) {
                failure = add(failure, e);
            }
        }
        try {
            topology.close();
        } catch (Exception e) {
            failure = add(failure, e);
        }
        try {
            StaleRuns.deleteTree(runDir);
        } catch (Exception e) {
            failure = add(failure, e);
        }
        progress.accept("cleaned up run " + names.id() + ": processes ended, namespaces and " + runDir + " removed");
        if (failure != null) {
            throw failure;
        }
    }

    private static Exception add(Exception failure, Exception e) {
        if (failure == null) {
            return e;
        }
        failure.addSuppressed(e);
        return failure;
    }
}
