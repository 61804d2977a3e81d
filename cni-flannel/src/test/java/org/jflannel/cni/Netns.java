package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A throwaway network namespace made with {@code ip netns add} (name unique to the run, at most
 * 15 characters), deleted on close; plus the process helper the integration tests use. The
 * linux-net NetNs API is written in parallel; these tests only need the iproute2 witness.
 */
final class Netns implements AutoCloseable {

    static final Path CNI_BIN = Path.of("/usr/lib/cni");

    record Result(int exit, String stdout, String stderr) {
    }

    final String name;

    private Netns(String name) {
        this.name = name;
    }

    /** A unique name: prefix (≤ 7 chars) + 8 hex digits. */
    static String uniqueName(String prefix) {
        String n = prefix + String.format("%08x", ThreadLocalRandom.current().nextInt());
        assertThat(n.length()).isLessThanOrEqualTo(15);
        return n;
    }

    static Netns create(String prefix) {
        Netns ns = new Netns(uniqueName(prefix));
        Result r = run(List.of("ip", "netns", "add", ns.name), Map.of(), "");
        assertThat(r.exit()).as("ip netns add %s: %s", ns.name, r.stderr()).isZero();
        ns.exec("ip", "link", "set", "lo", "up");
        return ns;
    }

    /** The privileges and binaries the netns tier needs: missing ones fail the test, never skip it. */
    static void requireEnvironment() {
        assertThat(run(List.of("id", "-u"), Map.of(), "").stdout().strip()).as("netns tests need root").isEqualTo("0");
        for (String plugin : new String[] {"bridge", "host-local", "portmap"}) {
            assertThat(Files.isExecutable(CNI_BIN.resolve(plugin))).as("%s/%s (Debian containernetworking-plugins)", CNI_BIN, plugin).isTrue();
        }
    }

    Path path() {
        return Path.of("/run/netns", name);
    }

    /** Runs a command inside this namespace and expects success. */
    String exec(String... cmd) {
        List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", name));
        full.addAll(List.of(cmd));
        Result r = run(full, Map.of(), "");
        assertThat(r.exit()).as("%s: %s", String.join(" ", cmd), r.stderr()).isZero();
        return r.stdout();
    }

    /** Runs a command in this namespace with exactly {@code env} and {@code stdin}. */
    Result execWith(Map<String, String> env, String stdin, String... cmd) {
        List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", name));
        full.addAll(List.of(cmd));
        return run(full, env, stdin);
    }

    /** Runs a process, bounded to 60 s. An empty {@code env} means "inherit". */
    static Result run(List<String> cmd, Map<String, String> env, String stdin) {
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd);
            if (!env.isEmpty()) {
                pb.environment().clear();
                pb.environment().putAll(env);
            }
            Process p = pb.start();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            Thread t = new Thread(() -> drain(p.getErrorStream(), err));
            t.start();
            try (OutputStream in = p.getOutputStream()) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("timed out: " + cmd);
            }
            t.join(10_000);
            return new Result(p.exitValue(), out, err.toString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    private static void drain(InputStream in, ByteArrayOutputStream out) {
        try (in) {
            in.transferTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        run(List.of("ip", "netns", "del", name), Map.of(), "");
    }
}
