package org.jflannel.subnet.kube;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * The daemon flags the kube subnet manager uses (REFERENCE §1), and its timings (upstream's, made
 * injectable so tests need not wait minutes).
 *
 * @param kubeconfigFile            {@code --kubeconfig-file}, "" for none
 * @param kubeApiUrl                {@code --kube-api-url}, "" for none; with neither, the in-cluster config
 * @param annotationPrefix          {@code --kube-annotation-prefix}, raw (normalised by {@link KubeAnnotations})
 * @param netConfPath               {@code --net-config-path}
 * @param setNodeNetworkUnavailable {@code --set-node-network-unavailable}
 * @param cacheSyncTimeout          how long start-up waits for the node informer to sync (10 min)
 * @param resyncPeriod              informer resync (5 min)
 * @param pollInterval              own-node wait and patch retry interval (3 s)
 * @param pollTimeout               own-node wait and patch retry limit (30 s)
 */
public record KubeOptions(String kubeconfigFile, String kubeApiUrl, String annotationPrefix, Path netConfPath,
                          boolean setNodeNetworkUnavailable, Duration cacheSyncTimeout, Duration resyncPeriod,
                          Duration pollInterval, Duration pollTimeout) {

    public KubeOptions {
        kubeconfigFile = kubeconfigFile == null ? "" : kubeconfigFile;
        kubeApiUrl = kubeApiUrl == null ? "" : kubeApiUrl;
        Objects.requireNonNull(annotationPrefix, "annotationPrefix");
        Objects.requireNonNull(netConfPath, "netConfPath");
        for (Duration d : new Duration[] {cacheSyncTimeout, resyncPeriod, pollInterval, pollTimeout}) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("kube timings must be positive, got " + d);
            }
        }
    }

    /** Upstream's defaults. */
    public static KubeOptions defaults() {
        return new KubeOptions("", "", KubeAnnotations.DEFAULT_PREFIX, Path.of("/etc/kube-flannel/net-conf.json"),
                true, Duration.ofMinutes(10), Duration.ofMinutes(5), Duration.ofSeconds(3), Duration.ofSeconds(30));
    }

    public KubeOptions withApiAccess(String kubeconfigFile, String kubeApiUrl) {
        return new KubeOptions(kubeconfigFile, kubeApiUrl, annotationPrefix, netConfPath, setNodeNetworkUnavailable,
                cacheSyncTimeout, resyncPeriod, pollInterval, pollTimeout);
    }

    public KubeOptions withAnnotationPrefix(String prefix) {
        return new KubeOptions(kubeconfigFile, kubeApiUrl, prefix, netConfPath, setNodeNetworkUnavailable,
                cacheSyncTimeout, resyncPeriod, pollInterval, pollTimeout);
    }

    public KubeOptions withNetConfPath(Path path) {
        return new KubeOptions(kubeconfigFile, kubeApiUrl, annotationPrefix, path, setNodeNetworkUnavailable,
                cacheSyncTimeout, resyncPeriod, pollInterval, pollTimeout);
    }

    public KubeOptions withSetNodeNetworkUnavailable(boolean set) {
        return new KubeOptions(kubeconfigFile, kubeApiUrl, annotationPrefix, netConfPath, set,
                cacheSyncTimeout, resyncPeriod, pollInterval, pollTimeout);
    }

    public KubeOptions withTimings(Duration cacheSyncTimeout, Duration pollInterval, Duration pollTimeout) {
        return new KubeOptions(kubeconfigFile, kubeApiUrl, annotationPrefix, netConfPath, setNodeNetworkUnavailable,
                cacheSyncTimeout, resyncPeriod, pollInterval, pollTimeout);
    }
}
