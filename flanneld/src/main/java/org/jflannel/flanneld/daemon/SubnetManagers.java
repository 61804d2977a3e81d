package org.jflannel.flanneld.daemon;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.jflannel.core.ConfigException;
import org.jflannel.core.SubnetEnv;
import org.jflannel.core.SubnetManager;
import org.jflannel.flanneld.config.Options;
import org.jflannel.subnet.etcd.EtcdOptions;
import org.jflannel.subnet.etcd.EtcdSubnetManager;
import org.jflannel.subnet.etcd.EtcdTimings;
import org.jflannel.subnet.kube.KubeOptions;
import org.jflannel.subnet.kube.KubeSubnetManager;

/** Builds the lease source the flags ask for: kube ({@code --kube-subnet-mgr}) or etcd (REFERENCE §4, §5). */
final class SubnetManagers {
    private SubnetManagers() {
    }

    /** Any failure is upstream's {@code Failed to create SubnetManager: <err>}, exit 1. */
    static SubnetManager create(Options o, Map<String, String> env, SubnetEnv.Previous previous, Runnable onLeaseLost)
            throws StartupError, InterruptedException {
        try {
            if (o.kubeSubnetMgr()) {
                KubeOptions kube = KubeOptions.defaults()
                        .withApiAccess(o.kubeconfigFile(), o.kubeApiUrl())
                        .withAnnotationPrefix(o.kubeAnnotationPrefix())
                        .withNetConfPath(Path.of(o.netConfigPath()))
                        .withSetNodeNetworkUnavailable(o.setNodeNetworkUnavailable());
                return KubeSubnetManager.create(kube, env);
            }
            List<String> endpoints = Arrays.stream(o.etcdEndpoints().split(",")).map(String::trim).toList();
            EtcdOptions etcd = new EtcdOptions(endpoints, o.etcdPrefix(), o.etcdKeyfile(), o.etcdCertfile(), o.etcdCafile(),
                    o.etcdUsername(), o.etcdPassword());
            return new EtcdSubnetManager(etcd, previous.subnet(), previous.ipv6Subnet(),
                    EtcdTimings.defaults(o.subnetLeaseRenewMargin()), onLeaseLost);
        } catch (IOException | ConfigException | RuntimeException e) {
            throw new StartupError("Failed to create SubnetManager: " + e.getMessage(), e);
        }
    }
}
