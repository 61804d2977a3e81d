package org.jflannel.flanneld.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real etcd inside a throwaway namespace (on the namespace's own loopback, so fixed ports are
 * safe), driven with etcdctl there. Stopped by PID in {@link #close()}.
 */
public final class NsEtcd implements AutoCloseable {
    public static final String ENDPOINT = "http://127.0.0.1:2379";
    private final ThrowawayNs ns;
    private final Process process;
    private final Path dir;

    private NsEtcd(ThrowawayNs ns, Process process, Path dir) {
        this.ns = ns;
        this.process = process;
        this.dir = dir;
    }

    public static NsEtcd start(ThrowawayNs ns) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("fd-etcd");
        ns.exec("ip", "link", "set", "lo", "up");
        List<String> cmd = new java.util.ArrayList<>(ns.execPrefix());
        cmd.addAll(List.of("/usr/bin/etcd", "--data-dir", dir.resolve("data").toString(), "--name", "fd",
                "--listen-client-urls", ENDPOINT, "--advertise-client-urls", ENDPOINT,
                "--listen-peer-urls", "http://127.0.0.1:2380", "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
                "--initial-cluster", "fd=http://127.0.0.1:2380"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("etcd.log").toFile()).start();
        NsEtcd etcd = new NsEtcd(ns, p, dir);
        for (int i = 0; i < 100; i++) { // up to ~30 s
            if (ns.tryExec("etcdctl", "--endpoints", ENDPOINT, "--command-timeout=1s", "endpoint", "health").status() == 0) {
                return etcd;
            }
            p.waitFor(300, TimeUnit.MILLISECONDS);
        }
        etcd.close();
        throw new IOException("etcd in " + ns.name() + " not healthy within 30 s");
    }

    public void put(String key, String value) throws IOException, InterruptedException {
        ns.exec("etcdctl", "--endpoints", ENDPOINT, "put", key, value);
    }

    public void delete(String key) throws IOException, InterruptedException {
        ns.exec("etcdctl", "--endpoints", ENDPOINT, "del", key);
    }

    @Override
    public void close() throws IOException {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }
}
