package org.jflannel.subnet.kube;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

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
        } else {
            config = Config.autoConfigure(null);
        }
        return configure(new KubernetesClientBuilder().withConfig(config)).build();
    }

    /** Names the client's task threads {@code kube-client-N} (daemon threads, shut down with the client). */
    public static KubernetesClientBuilder configure(KubernetesClientBuilder builder) {
        return builder.withTaskExecutorSupplier(new KubernetesClientBuilder.ExecutorSupplier() {
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
