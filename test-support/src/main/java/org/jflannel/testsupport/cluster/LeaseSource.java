package org.jflannel.testsupport.cluster;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.jflannel.core.Ip4Net;
import org.jflannel.testsupport.cluster.ClusterOptions.Mode;

/**
 * Where the cluster's leases live, running in the fabric namespace: a real etcd holding the network
 * config (etcd mode), or the Kubernetes mock API server holding one Node per node with its podCIDR
 * and net-conf.json in the run directory (kube mode). Says how flanneld must be started against it.
 * Owns that process.
 */
final class LeaseSource implements AutoCloseable {
    private final FabricEtcd etcd;
    private final KubeApi kubeApi;
    private final List<String> flanneldArgs;

    private LeaseSource(FabricEtcd etcd, KubeApi kubeApi, List<String> flanneldArgs) {
        this.etcd = etcd;
        this.kubeApi = kubeApi;
        this.flanneldArgs = List.copyOf(flanneldArgs);
    }

    static LeaseSource start(ClusterOptions options, ClusterNames names, Path runDir, Consumer<String> progress)
            throws Exception {
        return options.mode() == Mode.ETCD ? startEtcd(options, names, runDir, progress)
                : startKube(options, names, runDir, progress);
    }

    private static LeaseSource startEtcd(ClusterOptions options, ClusterNames names, Path runDir,
                                         Consumer<String> progress) throws Exception {
        FabricEtcd etcd = FabricEtcd.start(names.fabric(), runDir.resolve("etcd"));
        try {
            etcd.put(FabricEtcd.PREFIX + "/config", options.netConfJson());
        } catch (Exception e) {
            etcd.close();
            throw e;
        }
        progress.accept("etcd: pid " + etcd.process().pid() + " at " + FabricEtcd.endpoint() + ", config "
                + options.netConfJson());
        return new LeaseSource(etcd, null, List.of("--etcd-endpoints=" + FabricEtcd.endpoint(),
                "--iface=" + ClusterNames.NODE_IFACE, "--ip-masq", "--healthz-ip=127.0.0.1",
                "--healthz-port=" + ClusterNode.HEALTHZ_PORT));
    }

    private static LeaseSource startKube(ClusterOptions options, ClusterNames names, Path runDir,
                                         Consumer<String> progress) throws Exception {
        KubeApi api = KubeApi.start(names.fabric(), runDir.resolve("kube-api"));
        try {
            Path netConf = runDir.resolve("net-conf.json");
            Files.writeString(netConf, options.netConfJson(), StandardCharsets.UTF_8);
            progress.accept("kube-api: mock API server pid " + api.process().pid() + " at http://"
                    + ClusterNames.fabricIp() + ":" + KubeApi.PORT);
            Ip4Net network = Ip4Net.parse(options.network());
            for (int i = 1; i <= options.nodes(); i++) {
                String podCidr = network.subnet(24, i - 1).toString(); // as the node-ipam controller: from the first
                if (options.dualStack()) { // both families, IPv4 first, as the node-ipam controller on a dual-stack cluster
                    podCidr += "," + ipv6PodCidr(options.ipv6Network(), i - 1);
                    api.createNode(ClusterNames.nodeName(i), podCidr, ClusterNames.nodeIp(i) + "," + ClusterNames.nodeIpv6(i));
                } else {
                    api.createNode(ClusterNames.nodeName(i), podCidr, ClusterNames.nodeIp(i));
                }
                progress.accept("kube-api: Node " + ClusterNames.nodeName(i) + " created, podCIDR " + podCidr);
            }
            return new LeaseSource(null, api, List.of("--kube-subnet-mgr", "--kubeconfig-file=" + api.kubeconfig(),
                    "--net-config-path=" + netConf, "--iface=" + ClusterNames.NODE_IFACE, "--ip-masq",
                    "--healthz-ip=127.0.0.1", "--healthz-port=" + ClusterNode.HEALTHZ_PORT));
        } catch (Exception e) {
            api.close();
            throw e;
        }
    }

    /** The {@code k}-th /64 of {@code ipv6Network} (0-based), as the node-ipam controller hands them out. */
    static String ipv6PodCidr(String ipv6Network, int k) {
        org.jflannel.linuxnet.netlink.IpPrefix net = org.jflannel.linuxnet.netlink.IpPrefix.parse(ipv6Network);
        if (k < 0 || k >= 1L << Math.min(62, 64 - net.prefixLength())) {
            throw new IllegalArgumentException("IPv6 pod CIDR " + k + " does not fit in " + ipv6Network);
        }
        java.math.BigInteger base = new java.math.BigInteger(1, net.address().getAddress());
        byte[] raw = base.add(java.math.BigInteger.valueOf(k).shiftLeft(64)).toByteArray();
        byte[] b = new byte[16];
        System.arraycopy(raw, Math.max(0, raw.length - 16), b, Math.max(0, 16 - raw.length), Math.min(16, raw.length));
        try {
            return new org.jflannel.linuxnet.netlink.IpPrefix(java.net.InetAddress.getByAddress(b), 64).toString();
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e); // not reached: 16 bytes
        }
    }

    /** flanneld's flags against this source (without {@code --subnet-file}, which is per node). */
    List<String> flanneldArgs() {
        return flanneldArgs;
    }

    /** Environment of node {@code i}'s flanneld: {@code NODE_NAME} in kube mode. */
    Map<String, String> env(int i) {
        return kubeApi != null ? Map.of("NODE_NAME", ClusterNames.nodeName(i)) : Map.of();
    }

    List<ManagedProcess> processes() {
        List<ManagedProcess> out = new ArrayList<>();
        if (etcd != null) {
            out.add(etcd.process());
        }
        if (kubeApi != null) {
            out.add(kubeApi.process());
        }
        return out;
    }

    FabricEtcd etcd() {
        if (etcd == null) {
            throw new IllegalStateException("this cluster runs in kube mode, not etcd");
        }
        return etcd;
    }

    KubeApi kube() {
        if (kubeApi == null) {
            throw new IllegalStateException("this cluster runs in etcd mode, not kube");
        }
        return kubeApi;
    }

    @Override
    public void close() throws InterruptedException {
        if (etcd != null) {
            etcd.close();
        }
        if (kubeApi != null) {
            kubeApi.close();
        }
    }
}
