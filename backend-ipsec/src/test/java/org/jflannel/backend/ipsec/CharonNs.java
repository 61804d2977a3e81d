package org.jflannel.backend.ipsec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jflannel.linuxnet.netns.NetNs;

/**
 * charon for tests, inside a throwaway namespace: {@code ip netns exec} into it, then a private mount
 * namespace with a tmpfs on /run so its fixed pidfile ({@code /var/run/charon.pid}) stays out of the
 * host's /run; its conf, VICI socket and log in a temporary directory. Its IKE ports are the namespace's.
 */
final class CharonNs {
    private CharonNs() {
    }

    static Path charon() {
        return CharonConf.findExecutable(null)
                .orElseThrow(() -> new IllegalStateException("no charon: install strongswan-charon (bin/setup)"));
    }

    static Charon.Settings settings(NetNs ns, Path dir) {
        List<String> cmd = List.of("ip", "netns", "exec", ns.name(), "unshare", "-m", "--propagation", "private",
                "sh", "-c", "mount -t tmpfs tmpfs /run && exec \"$0\"", charon().toString());
        return new Charon.Settings(cmd, dir.resolve("strongswan.conf"), dir.resolve("charon.vici"), Duration.ofSeconds(30),
                dir.resolve("charon.log"));
    }

    /** A veth pair in {@code ns}, {@code address} on its first end, both up: an address for charon's kernel-netlink. */
    static void underlay(NetNs ns, String address) throws IOException, InterruptedException {
        ip(ns, "link", "set", "lo", "up");
        ip(ns, "link", "add", "u0", "type", "veth", "peer", "name", "u1");
        ip(ns, "addr", "add", address, "dev", "u0");
        ip(ns, "link", "set", "u0", "up");
        ip(ns, "link", "set", "u1", "up");
    }

    static String ip(NetNs ns, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("ip", "-n", ns.name()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(cmd + " failed: " + out);
        }
        return out;
    }

    /** The log, for assertion messages. */
    static String log(Path dir) {
        try {
            return Files.readString(dir.resolve("charon.log"));
        } catch (IOException e) {
            return "(no charon log: " + e.getMessage() + ")";
        }
    }
}
