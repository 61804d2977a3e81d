package org.jflannel.flanneld.iptables;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jflannel.flanneld.exec.BoundedProcess;

/**
 * Runs {@code iptables}/{@code ip6tables} and {@code iptables-restore}/{@code ip6tables-restore}
 * for one family. iptables has no stable library interface, so these processes are the interface
 * (as upstream's go-iptables does). {@code commandPrefix} is empty in the daemon; tests put
 * {@code ip netns exec <ns>} there to stay inside their throwaway namespace.
 */
public final class IptablesCli {
    private static final Pattern VERSION = Pattern.compile("v(\\d+)\\.(\\d+)\\.(\\d+)");
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** {@code iptables} was not found or could not run. */
    public static final class MissingBinaryException extends IOException {
        private static final long serialVersionUID = 1L;

        MissingBinaryException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final boolean ipv6;
    private final List<String> commandPrefix;
    private int[] version;

    public IptablesCli(boolean ipv6, List<String> commandPrefix) {
        this.ipv6 = ipv6;
        this.commandPrefix = List.copyOf(commandPrefix);
    }

    public boolean ipv6() {
        return ipv6;
    }

    public String binary() {
        return ipv6 ? "ip6tables" : "iptables";
    }

    /** {@code iptables --version} as {major, minor, patch}; cached. */
    public synchronized int[] version() throws IOException, InterruptedException {
        if (version == null) {
            Result r = exec(List.of(binary(), "--version"), null);
            Matcher m = VERSION.matcher(r.output());
            if (r.status() != 0 || !m.find()) {
                throw new IOException(binary() + " --version: unexpected output: " + r.output().trim());
            }
            version = new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3))};
        }
        return version.clone();
    }

    /** REFERENCE §8.3: {@code --wait} for iptables-restore and {@code --random-fully} need iptables ≥ 1.6.2. */
    public boolean atLeast162() throws IOException, InterruptedException {
        return atLeast(version(), 1, 6, 2);
    }

    static boolean atLeast(int[] v, int major, int minor, int patch) {
        if (v[0] != major) {
            return v[0] > major;
        }
        if (v[1] != minor) {
            return v[1] > minor;
        }
        return v[2] >= patch;
    }

    /** {@code -C}: exit 0 exists, 1 does not (also when the chain is missing); anything else is an error. */
    public boolean exists(IptRule rule) throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("-t", rule.table()));
        args.addAll(rule.withAction("-C"));
        Result r = iptables(args);
        if (r.status() > 1) {
            throw new IOException(binary() + " " + String.join(" ", args) + ": exit " + r.status() + ": " + r.output().trim());
        }
        return r.status() == 0;
    }

    public boolean chainExists(String table, String chain) throws IOException, InterruptedException {
        return iptables(List.of("-t", table, "-S", chain)).status() == 0;
    }

    /** Creates the chain when it is missing (an existing chain keeps its rules: the payload deletes and re-appends them). */
    public void ensureChain(String table, String chain) throws IOException, InterruptedException {
        if (!chainExists(table, chain)) {
            check(iptables(List.of("-t", table, "-N", chain)), "-t " + table + " -N " + chain);
        }
    }

    /** Runs {@code iptables <args> --wait}; the caller reads the status. */
    public Result iptables(List<String> args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(binary());
        cmd.addAll(args);
        cmd.add("--wait");
        return exec(cmd, null);
    }

    /** One {@code iptables-restore --noflush [--wait]} transaction. */
    public void restore(String payload) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(binary() + "-restore", "--noflush"));
        if (atLeast162()) {
            cmd.add("--wait");
        }
        Result r = exec(cmd, payload);
        if (r.status() != 0) {
            throw new IOException(String.join(" ", cmd) + ": exit " + r.status() + ": " + r.output().trim()
                    + " (payload: " + payload.replace('\n', '|') + ")");
        }
    }

    static void check(Result r, String what) throws IOException {
        if (r.status() != 0) {
            throw new IOException("iptables " + what + ": exit " + r.status() + ": " + r.output().trim());
        }
    }

    /** Exit status and combined stdout/stderr. */
    public record Result(int status, String output) {
    }

    private Result exec(List<String> cmd, String stdin) throws IOException, InterruptedException {
        List<String> full = new ArrayList<>(commandPrefix);
        full.addAll(cmd);
        try {
            BoundedProcess.Result r = BoundedProcess.run(full, stdin, TIMEOUT);
            return new Result(r.status(), r.output());
        } catch (BoundedProcess.NotStartedException e) {
            throw new MissingBinaryException(cmd.get(0) + " binary was not found: " + e.getMessage(), e.getCause());
        }
    }
}
