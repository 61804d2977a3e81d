package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A real etcd (Debian's {@code /usr/bin/etcd}) running inside the fabric namespace, listening on the
 * bridge address so every node reaches it; {@code etcdctl} run in the same namespace is the harness's
 * independent client (put the network config, read and delete leases, plant a bad one).
 */
final class FabricEtcd implements AutoCloseable {
    static final String PREFIX = "/coreos.com/network";
    private static final Duration HEALTHY_WITHIN = Bounds.scaled(Duration.ofSeconds(30));
    private static final Duration CTL_WITHIN = Bounds.scaled(Duration.ofSeconds(15));

    private final String fabricNs;
    private final ManagedProcess process;

    private FabricEtcd(String fabricNs, ManagedProcess process) {
        this.fabricNs = fabricNs;
        this.process = process;
    }

    /** Starts etcd in {@code fabricNs} with its data under {@code dir} and waits until it answers. */
    static FabricEtcd start(String fabricNs, Path dir) throws Exception {
        Path bin = Path.of(System.getProperty("jflannel.etcd.binary", "/usr/bin/etcd"));
        if (!Files.isExecutable(bin)) {
            throw new IllegalStateException("etcd not found at " + bin + " (Debian package etcd-server; bin/setup installs it)");
        }
        String client = endpoint();
        String peer = "http://127.0.0.1:2380";
        List<String> cmd = List.of("ip", "netns", "exec", fabricNs, bin.toString(),
                "--name", "fabric", "--data-dir", dir.resolve("data").toString(),
                "--listen-client-urls", client, "--advertise-client-urls", client,
                "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                "--initial-cluster", "fabric=" + peer, "--log-level", "warn", "--logger", "zap");
        FabricEtcd etcd = new FabricEtcd(fabricNs, ManagedProcess.start("etcd", cmd, Map.of(), dir.resolve("etcd.log")));
        try {
            Wait.until("etcd healthy at " + client, HEALTHY_WITHIN, () -> {
                if (!etcd.process.isAlive()) {
                    throw new Wait.Abort("etcd exited: " + etcd.process.logTail(20));
                }
                return etcd.ctl("endpoint", "health").ok();
            });
        } catch (Exception e) {
            etcd.close();
            throw e;
        }
        return etcd;
    }

    /** The client URL the nodes use. */
    static String endpoint() {
        return "http://" + ClusterNames.fabricIp() + ":2379";
    }

    ManagedProcess process() {
        return process;
    }

    /** Runs {@code etcdctl --endpoints=<ours> args...} in the fabric namespace. */
    Cmd.Result ctl(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", fabricNs, "etcdctl",
                "--endpoints=" + endpoint(), "--dial-timeout=2s", "--command-timeout=5s"));
        cmd.addAll(List.of(args));
        return Cmd.run(CTL_WITHIN, cmd, Map.of("ETCDCTL_API", "3"), null);
    }

    void put(String key, String value) throws IOException, InterruptedException {
        ctl("put", key, value).orThrow();
    }

    /**
     * Puts {@code key} attached to a fresh etcd lease of {@code ttl}, as flanneld writes its own
     * subnet leases: upstream v0.20.2 asks etcd for the TTL of the key's lease on every lease event it
     * watches, which a key put without a lease does not have.
     */
    void putWithTtl(String key, String value, Duration ttl) throws IOException, InterruptedException {
        String granted = ctl("lease", "grant", Long.toString(ttl.toSeconds())).orThrow().stdout().strip();
        String[] words = granted.split("\\s+"); // "lease 694d9a5f0b6c7d8e granted with TTL(3600s)"
        if (words.length < 2 || !words[0].equals("lease")) {
            throw new IOException("etcdctl lease grant: unexpected output \"" + granted + "\"");
        }
        ctl("put", "--lease=" + words[1], key, value).orThrow();
    }

    /** Rewrites {@code key} with its etcd lease (its TTL) kept: what a daemon renewing it would write. */
    void putKeepingLease(String key, String value) throws IOException, InterruptedException {
        ctl("put", "--ignore-lease", key, value).orThrow();
    }

    /** Deletes {@code key}; returns how many keys were deleted. */
    int delete(String key) throws IOException, InterruptedException {
        return Integer.parseInt(ctl("del", key).orThrow().stdout().strip());
    }

    /** Keys under {@code prefix}, in etcd's order. */
    List<String> keys(String prefix) throws IOException, InterruptedException {
        return ctl("get", "--prefix", "--keys-only", prefix).orThrow().stdout().lines()
                .filter(l -> !l.isBlank()).toList();
    }

    /** The value of {@code key}, or null when absent. */
    String get(String key) throws IOException, InterruptedException {
        List<String> lines = ctl("get", "--print-value-only", key).orThrow().stdout().lines().toList();
        return lines.isEmpty() ? null : String.join("\n", lines);
    }

    @Override
    public void close() throws InterruptedException {
        process.kill();
    }
}
