package org.jflannel.flanneld.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jflannel.linuxnet.netns.NetNs;

/**
 * A network namespace for one test, unique name (≤ 15 chars), deleted in {@link #close()}. Tests
 * run {@code ip}/{@code iptables} inside it through {@code ip netns exec} as an independent witness.
 */
public final class ThrowawayNs implements AutoCloseable {
    private final NetNs ns;

    private ThrowawayNs(NetNs ns) {
        this.ns = ns;
    }

    public static ThrowawayNs create(String prefix) throws IOException {
        String name = prefix + Long.toString(ThreadLocalRandom.current().nextLong(1L << 30, 1L << 35), 36);
        if (name.length() > 15) {
            throw new IllegalArgumentException("namespace name too long: " + name);
        }
        return new ThrowawayNs(NetNs.create(name));
    }

    /** A namespace with an external interface ext0 (192.0.2.10/24, peer end up) and a default route, as a node has. */
    public static ThrowawayNs node(String prefix) throws Exception {
        ThrowawayNs ns = create(prefix);
        try {
            ns.exec("ip", "link", "add", "ext0", "type", "veth", "peer", "name", "ext0p");
            ns.exec("ip", "addr", "add", "192.0.2.10/24", "dev", "ext0");
            ns.exec("ip", "link", "set", "ext0p", "up");
            ns.exec("ip", "link", "set", "ext0", "up");
            ns.exec("ip", "route", "add", "default", "via", "192.0.2.1");
            return ns;
        } catch (Exception e) {
            ns.close();
            throw e;
        }
    }

    public String name() {
        return ns.name();
    }

    public NetNs netns() {
        return ns;
    }

    /** {@code ip netns exec <ns>}: the prefix the code under test runs its commands with. */
    public List<String> execPrefix() {
        return List.of("ip", "netns", "exec", ns.name());
    }

    /** Runs a command in the namespace; fails on a non-zero exit; returns stdout+stderr. */
    public String exec(String... cmd) throws IOException, InterruptedException {
        Result r = tryExec(cmd);
        if (r.status != 0) {
            throw new IOException(String.join(" ", cmd) + ": exit " + r.status + ": " + r.output);
        }
        return r.output;
    }

    public Result tryExec(String... cmd) throws IOException, InterruptedException {
        List<String> full = new ArrayList<>(execPrefix());
        full.addAll(List.of(cmd));
        Path out = Files.createTempFile("ns-exec", ".out");
        try {
            Process p = new ProcessBuilder(full).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            p.getOutputStream().close();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", full) + ": no exit within 30 s");
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
        }
    }

    public record Result(int status, String output) {
    }

    @Override
    public void close() throws IOException {
        try {
            ns.delete();
        } finally {
            ns.close();
        }
    }
}
