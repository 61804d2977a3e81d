package org.jflannel.testsupport.vm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jflannel.testsupport.cluster.UpstreamFlannel;

/**
 * Test classes run inside the kernel VM: {@code tools/kernel-vm/run.sh} boots Debian 12's own kernel
 * (which has WireGuard, unlike this project's machines) under qemu with this machine's filesystem at the
 * same paths, read-only (the project root as an overlay: writes stay in the VM), loads {@code tun} and
 * {@code br_netfilter}, and runs {@link VmTestMain} there on this JVM's {@code java} and class path.
 * The harness fetches the kernel package from Debian's mirror on its first run (cached in
 * /var/cache/jflannel/kernel-vm).
 */
public final class KernelVm {
    /** The system property that is {@code true} in the guest's JVM. */
    public static final String IN_VM = "jflannel.in-vm";

    /** What the run printed (the VM's console for the command: the tests' output, then the summary line) and its exit status. */
    public record Result(boolean ended, int exit, String output) {
        /** The summary line {@link VmTestMain} prints last, or "" when there is none. */
        public String summary() {
            return output.lines().filter(l -> l.startsWith("vm tests: ")).reduce((a, b) -> b).orElse("");
        }
    }

    private KernelVm() {
    }

    /** Whether this JVM runs in the kernel VM (under TCG: every CPU-bound path is many times slower than on the host). */
    public static boolean inVm() {
        return Boolean.getBoolean(IN_VM);
    }

    /** Runs {@code classes} in the VM within {@code bound} (the VM's own timeout a minute less); the output is also printed. */
    public static Result run(Duration bound, Class<?>... classes) throws IOException, InterruptedException {
        Path root = projectRoot();
        Path harness = root.resolve("tools/kernel-vm/run.sh");
        if (!Files.isRegularFile(harness)) {
            throw new IllegalStateException("the kernel VM harness is missing: " + harness);
        }
        List<String> cmd = new ArrayList<>(List.of(harness.toString(), "--timeout", Long.toString(bound.toSeconds() - 60),
                "--module", "tun", "--module", "br_netfilter", "--overlay", root.toString(), "--",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:TieredStopAtLevel=1",
                "-Djflannel.integration=" + Boolean.getBoolean("jflannel.integration"),
                // the guest's /tmp shows the host's (the project may live there), where other runs keep state
                // (the cluster harness would take a live run of the host's for a stale one of its own): the
                // guest's own temporary files go to its fresh /run
                "-Djava.io.tmpdir=/run",
                // tests that size their traffic or bounds to the emulated machine (TCG, no vector units for the guest's crypto)
                "-D" + IN_VM + "=true"));
        Path upstream = UpstreamFlannel.configuredDir();
        if (upstream != null) { // the host's filesystem is the guest's: the same path names upstream's binaries there
            cmd.add("-D" + UpstreamFlannel.PROPERTY + "=" + upstream);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), VmTestMain.class.getName()));
        for (Class<?> c : classes) {
            cmd.add(c.getName());
        }
        Path log = Files.createTempFile("kernel-vm", ".log");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            boolean ended = p.waitFor(bound.toSeconds(), TimeUnit.SECONDS);
            if (!ended) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
            String out = Files.readString(log, StandardCharsets.UTF_8);
            System.out.println(out);
            return new Result(ended, ended ? p.exitValue() : -1, out);
        } finally {
            Files.deleteIfExists(log);
        }
    }

    /** The project root: the module's parent when tests run in a module (Maven's working directory), else the working directory. */
    static Path projectRoot() {
        Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        return Files.isDirectory(dir.resolve("tools/kernel-vm")) ? dir : dir.getParent();
    }
}
