package org.jflannel.subnet.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.jflannel.core.ConfigException;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.MacAddress;
import org.jflannel.core.NetConf;
import org.jflannel.core.SubnetManager;
import org.jflannel.core.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Leases from Kubernetes Node objects (REFERENCE §4): our subnet is our node's podCIDR(s), what we
 * publish goes into its annotations, the peers come from a node informer.
 *
 * <p>Lifecycle: {@link #create} (or {@link #start} with a client of your own) resolves the node name,
 * reads net-conf.json and waits for the informer to sync; {@link #close} stops everything it started.
 */
public final class KubeSubnetManager implements SubnetManager {

    private static final Logger LOG = LoggerFactory.getLogger(KubeSubnetManager.class);
    /** Backends upstream lets run IPv6; every other one is forced to IPv4 only (§4.4). */
    private static final Set<String> DUAL_STACK_BACKENDS = Set.of("vxlan", "host-gw", "wireguard");

    private final KubernetesClient client;
    private final boolean ownsClient;
    private final KubeOptions options;
    private final KubeAnnotations keys;
    private final KubeEnv env;
    private final NetConf netConf;
    private final boolean ipv4;
    private final boolean ipv6;
    private final String nodeName;
    private final OwnNodeClient ownNode;
    private final LeaseTracker tracker;
    private final OwnNodeGuard ownNodeGuard;
    private final NodeInformer informer;
    private final Clock clock;

    private KubeSubnetManager(KubernetesClient client, boolean ownsClient, KubeOptions options, KubeAnnotations keys,
                              KubeEnv env, NetConf netConf, String nodeName, Clock clock) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.options = options;
        this.keys = keys;
        this.env = env;
        this.netConf = netConf;
        this.ipv4 = netConf.enableIPv4();
        this.ipv6 = netConf.enableIPv6() && DUAL_STACK_BACKENDS.contains(netConf.backend().type());
        this.nodeName = nodeName;
        this.clock = clock;
        this.ownNode = new OwnNodeClient(client, nodeName);
        this.tracker = new LeaseTracker(nodeName, new NodeLeases(keys, ipv4, ipv6));
        this.ownNodeGuard = new OwnNodeGuard(nodeName, keys, ipv4, ownNode, () -> informerOrEmpty(nodeName), options, clock);
        this.informer = new NodeInformer(client, keys, options.resyncPeriod(), NodeListener.both(tracker, ownNodeGuard));
    }

    /** Connects as the flags say ({@link KubeClients#connect}), then as {@link #start}; the client is closed with the manager. */
    public static KubeSubnetManager create(KubeOptions options, Map<String, String> env)
            throws IOException, InterruptedException, ConfigException {
        KubernetesClient client = KubeClients.connect(options, env);
        try {
            return start(client, true, options, env, Clock.systemUTC());
        } catch (IOException | InterruptedException | ConfigException | RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /**
     * Starts on {@code client} (which stays the caller's): checks the annotation prefix and the
     * environment, reads net-conf.json, finds our node's name, starts the informer and waits for it
     * to sync. Errors are upstream's start-up errors (§4.1).
     */
    public static KubeSubnetManager start(KubernetesClient client, KubeOptions options, Map<String, String> env, Clock clock)
            throws IOException, InterruptedException, ConfigException {
        return start(client, false, options, env, clock);
    }

    private static KubeSubnetManager start(KubernetesClient client, boolean owns, KubeOptions options,
                                           Map<String, String> envVars, Clock clock)
            throws IOException, InterruptedException, ConfigException {
        KubeAnnotations keys = KubeAnnotations.forPrefix(options.annotationPrefix());
        KubeEnv env = KubeEnv.from(envVars);
        NetConf conf = readNetConf(options.netConfPath());
        String node = NodeNames.resolve(client, env);
        KubeSubnetManager m = new KubeSubnetManager(client, owns, options, keys, env, conf, node, clock);
        try {
            m.informer.start(options.cacheSyncTimeout(), env.contWhenCacheNotReady());
        } catch (IOException | InterruptedException | RuntimeException e) {
            m.informer.close();
            throw e;
        }
        LOG.info("kube subnet manager started node={} prefix={} ipv4={} ipv6={}", node, keys.prefix(), m.ipv4, m.ipv6);
        return m;
    }

    private static NetConf readNetConf(Path path) throws ConfigException {
        String json;
        try {
            json = Files.readString(path);
        } catch (IOException e) {
            throw new ConfigException("net-config-path", "failed to read net conf: " + e, e);
        }
        try {
            return NetConf.parse(json, NetConf.Mode.KUBE, path.toString());
        } catch (ConfigException e) {
            throw new ConfigException(e.field(), "error parsing subnet config: " + e.getMessage(), e);
        }
    }

    @Override
    public String name() {
        return "kube";
    }

    /** Our node's name (NODE_NAME or our pod's spec.nodeName). */
    /** The client the manager watches Nodes with; other watchers of the same API (network policy) share it. */
    public KubernetesClient client() {
        return client;
    }

    public String nodeName() {
        return nodeName;
    }

    @Override
    public NetConf networkConfig() {
        return netConf;
    }

    @Override
    public Lease acquireLease(LeaseAttrs attrs) throws IOException, InterruptedException, ConfigException {
        Node node = awaitOwnNode();
        NodeView view = NodeView.of(node, keys);
        if (view.podCidr().isEmpty()) {
            throw new ConfigException("spec.podCIDR", "node \"" + nodeName + "\" pod cidr not assigned");
        }
        NodeLeases.PodCidrs cidrs = NodeLeases.PodCidrs.of(view);
        Map<String, String> current = node.getMetadata().getAnnotations() == null ? Map.of() : node.getMetadata().getAnnotations();
        Map<String, String> changes = OwnNodeAnnotations.changes(keys, attrs, ipv4, current);
        if (!changes.isEmpty()) {
            ownNode.patchAnnotations(changes, options.pollInterval(), options.pollTimeout());
        }
        if (ipv4 && (cidrs.ipv4() == null || !netConf.network().contains(cidrs.ipv4()))) {
            throw new ConfigException("spec.podCIDR", "subnet \"" + netConf.network() + "\" specified in the flannel net config doesn't contain \""
                    + (cidrs.ipv4() == null ? "<nil>" : cidrs.ipv4()) + "\" PodCIDR of the \"" + nodeName + "\" node");
        }
        if (ipv6 && (cidrs.ipv6() == null || netConf.ipv6Network() == null || !netConf.ipv6Network().contains(cidrs.ipv6()))) {
            throw new ConfigException("spec.podCIDRs", "subnet \"" + netConf.ipv6Network() + "\" specified in the flannel net config doesn't contain \""
                    + (cidrs.ipv6() == null ? "<nil>" : cidrs.ipv6()) + "\" IPv6 PodCIDR of the \"" + nodeName + "\" node");
        }
        Lease lease = new Lease(ipv4 ? cidrs.ipv4() : null, ipv6 ? cidrs.ipv6() : null, attrs,
                clock.instant().plus(Duration.ofHours(24)));
        ownNodeGuard.arm(attrs);
        LOG.info("lease acquired node={} subnet={} annotationsPatched={}", nodeName, lease.key(), !changes.isEmpty());
        return lease;
    }

    /** Step 1 of §4.5: our node in the informer cache, polled every pollInterval up to pollTimeout. */
    private Node awaitOwnNode() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + options.pollTimeout().toNanos();
        while (true) {
            Optional<Node> n = informer.getSlim(nodeName);
            if (n.isPresent()) {
                return n.get();
            }
            if (System.nanoTime() + options.pollInterval().toNanos() - deadline > 0) {
                throw new IOException("timeout contacting kube-api, failed to patch node \"" + nodeName
                        + "\". Error: timed out waiting for the condition");
            }
            LOG.info("waiting for own node in the informer cache node={}", nodeName);
            Thread.sleep(options.pollInterval().toMillis());
        }
    }

    @Override
    public Subscription watchLeases(Consumer<List<LeaseEvent>> sink) {
        LeaseEventQueue q = tracker.subscribe(env.eventQueueDepth(), sink, informer::views);
        return () -> tracker.unsubscribe(q);
    }

    /** Sets NetworkUnavailable=False (unless --set-node-network-unavailable=false); a failure is only logged. */
    @Override
    public void completeLease(Lease own) {
        if (!options.setNodeNetworkUnavailable()) {
            return;
        }
        LOG.info("Setting NodeNetworkUnavailable node={}", nodeName);
        try {
            ownNode.setNetworkAvailable(clock.instant());
            ownNodeGuard.networkAvailableSet();
        } catch (KubernetesClientException e) {
            LOG.error("CompleteLease execute error err: {} node={}", e.getMessage(), nodeName);
        }
    }

    /** The {@code node-public-ip} annotation of our node (read with a GET; an error is logged and gives empty). */
    public Optional<String> nodePublicIp() {
        return ownAnnotation(keys.nodePublicIp());
    }

    /** The {@code node-public-ipv6} annotation of our node. */
    public Optional<String> nodePublicIpv6() {
        return ownAnnotation(keys.nodePublicIpv6());
    }

    /**
     * The {@code VtepMAC} stored in our node's {@code backend-data} ({@code backend-v6-data} when
     * {@code ipv6}), read with the normalised key (Ours, §4.2), for reuse after a restart (§6.3).
     */
    public Optional<MacAddress> storedVtepMac(boolean ipv6Family) {
        return ownAnnotation(ipv6Family ? keys.backendV6Data() : keys.backendData()).flatMap(this::vtepMac);
    }

    private Optional<MacAddress> vtepMac(String backendData) {
        try {
            JsonNode mac = new ObjectMapper().readTree(backendData).path("VtepMAC");
            return mac.isTextual() ? Optional.of(MacAddress.parse(mac.asText())) : Optional.empty();
        } catch (IOException | IllegalArgumentException e) {
            LOG.warn("stored backend data has no usable VtepMAC node={} err={}", nodeName, e.getMessage());
            return Optional.empty();
        }
    }

    private Optional<String> ownAnnotation(String key) {
        try {
            Node n = ownNode.get();
            if (n == null) {
                LOG.error("Failed to get node for backend data: nodes \"{}\" not found", nodeName);
                return Optional.empty();
            }
            Map<String, String> a = n.getMetadata().getAnnotations();
            String v = a == null ? null : a.get(key);
            return v == null || v.isEmpty() ? Optional.empty() : Optional.of(v);
        } catch (KubernetesClientException e) {
            LOG.error("Failed to get node for backend data: {} node={}", e.getMessage(), nodeName);
            return Optional.empty();
        }
    }

    /** Our node from the informer's cache; empty before the informer exists or when it lacks the node. */
    private Optional<Node> informerOrEmpty(String name) {
        return informer == null ? Optional.empty() : informer.getSlim(name);
    }

    /** The informer, for tests in this package. */
    NodeInformer informerForTest() {
        return informer;
    }

    @Override
    public void close() {
        tracker.close(); // first: releases an informer callback waiting for queue space
        informer.close();
        try {
            ownNodeGuard.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (ownsClient) {
            client.close();
        }
    }
}
