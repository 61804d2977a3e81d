package org.jflannel.subnet.kube;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

import java.io.File;
import java.io.IOException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Builds the API client (REFERENCE §4.1) as upstream's {@code BuildConfigFromFlags} does: the
 * kubeconfig file, its server replaced by {@code --kube-api-url} when both are given; the URL alone
 * (no credentials); with neither, the in-cluster service account. Its task threads are named
 * {@code kube-client-N}: informer callbacks run there.
 */
public final class KubeClients {

    private KubeClients() {
    }

    public static KubernetesClient connect(KubeOptions options) throws IOException {
        return connect(options, System.getenv());
    }

    /** As {@link #connect(KubeOptions)}, {@code env} telling whether we run in a pod. */
    public static KubernetesClient connect(KubeOptions options, java.util.Map<String, String> env) throws IOException {
        Config config;
        if (!options.kubeconfigFile().isEmpty()) {
            File file = new File(options.kubeconfigFile());
            if (!file.canRead()) {
                throw new IOException("kubeconfig file " + file + " cannot be read");
            }
            config = Config.fromKubeconfig(file);
            if (!options.kubeApiUrl().isEmpty()) {
                config.setMasterUrl(options.kubeApiUrl());
            }
        } else if (!options.kubeApiUrl().isEmpty()) {
            config = new ConfigBuilder(Config.empty()).withMasterUrl(options.kubeApiUrl()).build();
        } else if (env.getOrDefault("KUBERNETES_SERVICE_HOST", "").isEmpty()
                || env.getOrDefault("KUBERNETES_SERVICE_PORT", "").isEmpty()) {
            // client-go's rest.InClusterConfig error, as upstream reports it
            throw new IOException("unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
                    + "KUBERNETES_SERVICE_PORT must be defined");
        } else {
            config = Config.autoConfigure(null); // the pod's service account
        }
        return build(config);
    }

    /**
     * A client on {@code config} with our settings: named task threads, and no request retries of its
     * own (fabric8 retries a 5xx up to 10 times with doubling back-off, ~100 s; our callers retry on
     * upstream's schedule, and the informer reconnects by itself).
     */
    public static KubernetesClient build(Config config) {
        Config ours = new ConfigBuilder(config).withRequestRetryBackoffLimit(0).build();
        return configure(new KubernetesClientBuilder().withConfig(ours)).build();
    }

    /**
     * JSON for the kinds the daemon reads: Node (the informer's watch events, GETs of our node), Pod
     * (our pod's {@code spec.nodeName}) and Status (API errors, watch ERROR events). fabric8's default
     * looks every kind up through {@code ServiceLoader} on the first watch event and so loads ~500
     * model classes (Gateway API, storage, flow control, ...) that cost metaspace and are never used;
     * a kind not registered here would arrive as a {@code GenericKubernetesResource}.
     */
    public static KubernetesSerialization serialization() {
        return SERIALIZATION;
    }

    /** One per JVM, as fabric8's own default (thread-safe; its Jackson caches stay warm across clients). */
    private static final KubernetesSerialization SERIALIZATION = newSerialization();

    private static KubernetesSerialization newSerialization() {
        KubernetesSerialization json = new KubernetesSerialization(new ObjectMapper(), false);
        json.registerKubernetesResource(Node.class);
        json.registerKubernetesResource(NodeList.class);
        json.registerKubernetesResource(Pod.class);
        json.registerKubernetesResource(Status.class);
        return json;
    }

    /**
     * Names the client's task threads {@code kube-client-N} (daemon threads, shut down with the client)
     * and gives it a {@link #serialization()} that knows only the kinds we read.
     */
    public static KubernetesClientBuilder configure(KubernetesClientBuilder builder) {
        return builder.withKubernetesSerialization(serialization()).withTaskExecutorSupplier(new KubernetesClientBuilder.ExecutorSupplier() {
            @Override
            public ExecutorService get() {
                AtomicInteger n = new AtomicInteger();
                return Executors.newCachedThreadPool(r -> {
                    Thread t = new Thread(r, "kube-client-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
            }

            @Override
            public void onClose(java.util.concurrent.Executor executor) {
                ((ExecutorService) executor).shutdownNow();
            }
        });
    }
}
