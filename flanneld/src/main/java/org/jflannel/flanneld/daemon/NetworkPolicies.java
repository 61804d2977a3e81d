package org.jflannel.flanneld.daemon;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.jflannel.core.ConfigException;
import org.jflannel.core.SubnetManager;
import org.jflannel.flanneld.config.Options;
import org.jflannel.flanneld.exec.BoundedProcess;
import org.jflannel.flanneld.health.Metrics;
import org.jflannel.flanneld.nftables.NftCli;
import org.jflannel.netpol.DropCounters;
import org.jflannel.netpol.NftScript;
import org.jflannel.netpol.PolicySync;
import org.jflannel.netpol.kube.PolicyInformers;
import org.jflannel.subnet.kube.KubeClients;
import org.jflannel.subnet.kube.KubeOptions;
import org.jflannel.subnet.kube.KubeSubnetManager;
import org.jflannel.subnet.kube.NodeNames;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours (issue 35): {@code --network-policy}. Watches Pods, Namespaces and NetworkPolicies through the
 * Kubernetes API (kube mode: the subnet manager's client; etcd mode: {@code --kubeconfig-file} or the
 * in-cluster config) and keeps the table {@code inet jflannel-netpol} equal to what they compile to for
 * this node, through {@code nft -f} (one transaction each time). Nothing waits for it: the overlay is up
 * before the first listing, and until then the table the kernel holds (a previous process's) stays.
 */
final class NetworkPolicies implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(NetworkPolicies.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final PolicySync sync;
    private final PolicyInformers informers;
    private final KubernetesClient ownClient;
    private final DeniedConnectionLog deniedLog;

    private NetworkPolicies(PolicySync sync, PolicyInformers informers, KubernetesClient ownClient, DeniedConnectionLog deniedLog) {
        this.sync = sync;
        this.informers = informers;
        this.ownClient = ownClient;
        this.deniedLog = deniedLog;
    }

    /** Starts enforcing; a missing API access is a start-up error naming what to give. */
    static NetworkPolicies start(Options o, Map<String, String> env, SubnetManager subnets) throws StartupError {
        KubernetesClient client;
        KubernetesClient own = null;
        String node;
        try {
            if (subnets instanceof KubeSubnetManager kube) {
                client = kube.client();
                node = kube.nodeName();
            } else {
                if (o.kubeconfigFile().isEmpty() && env.getOrDefault("KUBERNETES_SERVICE_HOST", "").isEmpty()) {
                    throw new StartupError("--network-policy needs the Kubernetes API: in etcd mode give --kubeconfig-file "
                            + "(or run in a pod, for the in-cluster config)");
                }
                own = KubeClients.connect(KubeOptions.defaults().withApiAccess(o.kubeconfigFile(), o.kubeApiUrl()), env);
                client = own;
                node = NodeNames.resolve(client, env);
            }
        } catch (IOException | ConfigException e) {
            throw new StartupError("--network-policy: cannot reach the Kubernetes API: " + e.getMessage(), e);
        }
        NftCli nft = new NftCli(List.of());
        PolicySync sync = new PolicySync(node, nft::run, DeniedConnectionLog.tableSetting(o.networkPolicyLogRate()));
        DeniedConnectionLog deniedLog = o.networkPolicyLogRate() == 0 ? null : DeniedConnectionLog.start(sync, o.networkPolicyLogRate());
        PolicyInformers informers = PolicyInformers.start(client, sync);
        LOG.info("network policy enforcement started node={} table=inet {}", node, NftScript.TABLE);
        return new NetworkPolicies(sync, informers, own, deniedLog);
    }

    PolicySync.Status status() {
        return sync.status();
    }

    /** The series of {@code flanneld_netpol_*} but the drops, read at scrape time. */
    Metrics.NetworkPolicySample sample() {
        PolicySync.Status s = sync.status();
        return new Metrics.NetworkPolicySample(s.policies(), s.rejected().size(), s.localPods(), s.chains(), s.applies(),
                s.failures(), s.lastApplyNanos() / 1e9);
    }

    /**
     * The table's drop counters by direction ({@code ingress}, {@code egress}), read with nft at scrape time (2 s at
     * most); empty before the first load or when they cannot be read.
     */
    Map<String, Long> droppedPackets() {
        if (sync.status().applies() == 0) {
            return Map.of();
        }
        try {
            BoundedProcess.Result r = BoundedProcess.run(DropCounters.command(), "", Duration.ofSeconds(2));
            if (r.status() != 0) {
                throw new IOException("exit " + r.status() + ": " + r.output().strip());
            }
            Map<String, Long> out = new TreeMap<>();
            DropCounters.parse(r.output()).forEach((d, n) -> out.put(d.name().toLowerCase(Locale.ROOT), n));
            return out;
        } catch (IOException | RuntimeException e) {
            countersFailing(e.getMessage());
            return Map.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Map.of();
        }
    }

    private volatile String countersError;

    private void countersFailing(String error) {
        if (!String.valueOf(error).equals(countersError)) {
            countersError = String.valueOf(error);
            LOG.warn("network policy drop counters not readable error=\"{}\"", error);
        }
    }

    /**
     * The {@code /policy} document: whether the first listing is in, the table's size and loads, the policies left
     * out and why, and each local pod with the policies isolating it per direction.
     */
    String json() throws JsonProcessingException {
        PolicySync.Status s = sync.status();
        var o = JSON.createObjectNode();
        o.put("node", sync.node()).put("table", "inet " + NftScript.TABLE).put("listed", s.ready())
                .put("policies", s.policies()).put("localPods", s.localPods()).put("isolatedChains", s.chains()).put("sets", s.sets())
                .put("loads", s.applies()).put("loadFailures", s.failures()).put("lastLoadSeconds", s.lastApplyNanos() / 1e9);
        if (s.lastError() != null) {
            o.put("lastError", s.lastError());
        }
        var rejected = o.putObject("rejected");
        new java.util.TreeMap<>(s.rejected()).forEach(rejected::put);
        var pods = o.putArray("pods");
        for (PolicySync.PodReport r : sync.report()) {
            var p = pods.addObject().put("pod", r.pod());
            var a = p.putArray("addresses");
            r.addresses().forEach(x -> a.add(x.toString()));
            var in = p.putArray("ingress");
            r.ingressPolicies().forEach(in::add);
            var eg = p.putArray("egress");
            r.egressPolicies().forEach(eg::add);
        }
        return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(o) + "\n";
    }

    /** The table stays in the kernel: the next process takes it over (no moment in which an isolated pod is open). */
    @Override
    public void close() {
        informers.close();
        sync.close();
        if (deniedLog != null) {
            deniedLog.close();
        }
        if (ownClient != null) {
            ownClient.close();
        }
    }
}
