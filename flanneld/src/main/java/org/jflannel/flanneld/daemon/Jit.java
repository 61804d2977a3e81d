package org.jflannel.flanneld.daemon;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.jflannel.core.BackendConfig;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.sys.Exec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours (issue 40): the JIT follows the configured backend. The launchers start the daemon with C1 only (its hot
 * paths are small; C2's compiler threads and code cache cost ~10 MB of RSS); a backend whose packets run through
 * the daemon (udp; wireguard in userspace) needs C2. Once the daemon knows its config and backend, and before it
 * has touched the kernel, {@link #followBackend} execs the launcher again with {@code JFLANNEL_JIT_CHOSEN=c2}:
 * the same PID (the container's init, signals and the DaemonSet see one process), the same arguments and
 * variables. {@code FLANNELD_JIT} set is the user's choice and always wins.
 *
 * <p>In kube mode the launchers guess the JIT from net-conf.json when they can read it ({@code "Type"}), so a udp
 * node starts with C2 at once; they say so with {@code -Djflannel.jit.guessed=true}, and a guess the parsed config
 * contradicts is corrected by the same relaunch, in either direction (etcd mode has its config in etcd: the
 * launchers start C1 there, and the daemon relaunches for udp and userspace wireguard).
 *
 * <p>Variables between the launcher and the daemon: {@code JFLANNEL_LAUNCHER} (the launcher's path, exported by
 * it: without it there is nothing to exec and a mismatch is a WARN), {@code JFLANNEL_JIT_CHOSEN} (the daemon's
 * choice, which the launcher honours under {@code FLANNELD_JIT}), {@code JFLANNEL_JIT_RELAUNCHED_AT} (the
 * monotonic clock at the exec, for the cost in the log line). The JIT in use is the launcher's
 * {@code -Djflannel.jit}, else the JVM's {@code TieredStopAtLevel}.
 */
final class Jit {
    private static final Logger LOG = LoggerFactory.getLogger(Jit.class);
    static final String OVERRIDE = "FLANNELD_JIT";
    static final String LAUNCHER = "JFLANNEL_LAUNCHER";
    static final String CHOSEN = "JFLANNEL_JIT_CHOSEN";
    static final String RELAUNCHED_AT = "JFLANNEL_JIT_RELAUNCHED_AT";

    enum Compiler {
        C1, C2;

        String text() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** The JIT the backend wants, and why (the log line's {@code reason}). */
    record Choice(Compiler compiler, String reason) {
    }

    private Jit() {
    }

    /**
     * The decision: {@code FLANNELD_JIT} when set; C2 for udp (the daemon forwards every packet) and for wireguard
     * in userspace ({@code userspaceWireguard}, asked only for wireguard: it seals every packet); C1 for the rest,
     * whose packets the kernel carries (vxlan, host-gw, wireguard in the kernel, extension, alloc).
     */
    static Choice choose(BackendConfig backend, Map<String, String> env, BooleanSupplier userspaceWireguard) {
        String override = env.getOrDefault(OVERRIDE, "");
        if (overridden(env)) {
            return new Choice(override.equals("c2") ? Compiler.C2 : Compiler.C1, OVERRIDE + "=" + override);
        }
        String type = "Backend.Type=" + backend.type();
        if (backend instanceof BackendConfig.Udp) {
            return new Choice(Compiler.C2, type + ": the daemon forwards every packet");
        }
        if (backend instanceof BackendConfig.Wireguard) {
            return userspaceWireguard.getAsBoolean()
                    ? new Choice(Compiler.C2, type + " in userspace: the daemon seals every packet")
                    : new Choice(Compiler.C1, type + " in the kernel: the kernel seals the packets");
        }
        return new Choice(Compiler.C1, type + ": the kernel carries the packets");
    }

    /** {@code FLANNELD_JIT} set to a choice ({@code c1}, {@code c2}); unset, empty or {@code auto} leave it to the backend. */
    static boolean overridden(Map<String, String> env) {
        String v = env.getOrDefault(OVERRIDE, "");
        return !v.isEmpty() && !v.equals("auto");
    }

    /** The JIT this JVM runs: the launcher's {@code -Djflannel.jit}, else the VM's {@code TieredStopAtLevel}; empty if neither says. */
    static Optional<Compiler> running() {
        String launched = System.getProperty("jflannel.jit", "");
        if (launched.equals("c1") || launched.equals("c2")) {
            return Optional.of(launched.equals("c2") ? Compiler.C2 : Compiler.C1);
        }
        if (ModuleLayer.boot().findModule("jdk.management").isEmpty()) {
            return Optional.empty();
        }
        try {
            int level = Integer.parseInt(java.lang.management.ManagementFactory.getPlatformMXBean(
                    com.sun.management.HotSpotDiagnosticMXBean.class).getVMOption("TieredStopAtLevel").getValue());
            return Optional.of(level >= 4 ? Compiler.C2 : Compiler.C1);
        } catch (RuntimeException | LinkageError e) {
            return Optional.empty();
        }
    }

    /**
     * What to do about {@code want} when running {@code now}: the exec of the launcher when the backend (not
     * {@code FLANNELD_JIT}) wants C2 and this JVM runs C1, or the launcher guessed ({@code guessed}) and guessed
     * wrong; only with a launcher known and not in its second run. C1 wanted while C2 runs by the user's or the
     * JVM's own flags stays as it is (only memory is at stake; no second start for it).
     */
    static boolean relaunchWanted(Choice want, Optional<Compiler> now, Map<String, String> env, boolean guessed) {
        if (now.isEmpty() || now.get() == want.compiler() || overridden(env) || env.containsKey(CHOSEN)
                || env.getOrDefault(LAUNCHER, "").isEmpty()) {
            return false;
        }
        return want.compiler() == Compiler.C2 || guessed;
    }

    /** The launcher chose the JIT from its own read of net-conf.json ({@code -Djflannel.jit.guessed=true}). */
    static boolean guessedByLauncher() {
        return Boolean.parseBoolean(System.getProperty("jflannel.jit.guessed", "false"));
    }

    /** The new process's variables: this one's, with the choice and the clock at the exec. */
    static Map<String, String> relaunchEnv(Map<String, String> env, Compiler c, long nanos) {
        Map<String, String> next = new HashMap<>(env);
        next.put(CHOSEN, c.text());
        next.put(RELAUNCHED_AT, Long.toString(nanos));
        return next;
    }

    /**
     * Logs the JIT in use and why, one line, and execs the launcher when {@link #relaunchWanted} (returns only if
     * that exec failed, said in a WARN: the daemon goes on with C1).
     */
    static void followBackend(BackendConfig backend, Map<String, String> env, List<String> args, BooleanSupplier userspaceWireguard) {
        Choice want = choose(backend, env, userspaceWireguard);
        Optional<Compiler> now = running();
        String in = now.map(Compiler::text).orElse("unknown");
        boolean guessed = guessedByLauncher();
        if (relaunchWanted(want, now, env, guessed)) {
            Path launcher = Path.of(env.get(LAUNCHER));
            if (Files.isExecutable(launcher)) {
                LOG.info("JIT relaunching jit={} wanted={} reason=\"{}\" launcher={}", in, want.compiler().text(), want.reason(), launcher);
                List<String> argv = new ArrayList<>(args.size() + 1);
                argv.add(launcher.toString());
                argv.addAll(args);
                try {
                    Exec.replaceProcess(launcher, argv, relaunchEnv(env, want.compiler(), System.nanoTime()));
                } catch (NetlinkException | RuntimeException e) {
                    LOG.warn("JIT relaunch failed jit={} wanted={} launcher={} error=\"{}\"", in, want.compiler().text(), launcher, e.getMessage());
                    return;
                }
            }
            LOG.warn("JIT not as wanted jit={} wanted={} reason=\"{}\" launcher={} error=\"not executable\"", in, want.compiler().text(),
                    want.reason(), launcher);
            return;
        }
        String relaunched = env.get(RELAUNCHED_AT);
        String cost = "";
        if (relaunched != null && env.containsKey(CHOSEN)) {
            try {
                cost = " relaunchedMs=" + (System.nanoTime() - Long.parseLong(relaunched)) / 1_000_000;
            } catch (NumberFormatException e) {
                cost = "";
            }
        }
        if (now.isPresent() && now.get() != want.compiler() && want.compiler() == Compiler.C2) {
            LOG.warn("JIT slower than wanted jit={} wanted={} reason=\"{}\" hint=\"start flanneld by its launcher (it follows the"
                    + " backend), or with FLANNELD_JIT=c2\"", in, want.compiler().text(), want.reason());
            return;
        }
        String by = overridden(env) ? "FLANNELD_JIT" : env.containsKey(CHOSEN) ? "daemon" : guessed ? "launcher" : "default";
        LOG.info("JIT jit={} reason=\"{}\" chosenBy={}{}", in, want.reason(), by, cost);
    }
}
