package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Upstream flannel for the interop tests, in two places. Its data files (kube-flannel.yml v0.28.9 and
 * v0.20.2, its Helm chart) are shipped beside the project as {@code <project root>/../shared/upstream/}
 * ({@link #dataDir}; CI clones the project into another folder with a read-only copy of {@code shared/}
 * beside it, so that path is taken relative to the project root). Its binaries are not shipped: they
 * come from the folder named by {@code JFLANNEL_UPSTREAM_DIR} (or the system property
 * {@code jflannel.upstream.dir}, which the kernel VM's runner sets in the guest): {@code flanneld}
 * v0.20.2, {@code flannel} (the Go CNI plugin v1.9.1). When the variable is unset or a file is missing,
 * the test is skipped (a JUnit assumption, counted as skipped) with one line naming the binary and how to
 * provide it, under the integration profile too: the suite must pass without them. A binary that is
 * there but unusable (not executable, or a flanneld of another version) fails the test under the
 * integration profile, since somebody asked for the interop tests and would otherwise not get them.
 */
public final class UpstreamFlannel {
    /** The environment variable naming the folder of upstream's binaries. */
    public static final String ENV = "JFLANNEL_UPSTREAM_DIR";
    /** The system property that overrides {@link #ENV} (set by the kernel VM's runner for the guest). */
    public static final String PROPERTY = "jflannel.upstream.dir";
    /** The data files' folder relative to the project root. */
    static final String DATA_DIR = "../shared/upstream";
    /** What {@code flanneld --version} prints for the binary the tests expect. */
    public static final String VERSION = "v0.20.2";
    /** The plugin's version the tests were written against (it has no version command of its own). */
    public static final String PLUGIN_VERSION = "v1.9.1";
    private static final Map<Path, String> VERSIONS = new ConcurrentHashMap<>();

    private UpstreamFlannel() {
    }

    /** Upstream flanneld v0.20.2 from {@link #ENV}, its version checked; skips when not provided. */
    public static Path flanneld() {
        return flanneld(System.getenv(ENV));
    }

    /** Upstream's Go CNI plugin from {@link #ENV}; skips when not provided. */
    public static Path plugin() {
        return require(configuredDir(System.getenv(ENV)), "flannel", "Go CNI plugin " + PLUGIN_VERSION + " (flannel)");
    }

    /** Both binaries (for tests that run upstream's node and its plugin); skips when either is not provided. */
    public static void requireAll() {
        flanneld();
        plugin();
    }

    /** {@link #flanneld()} with {@code envValue} standing for the environment variable's value (tests). */
    static Path flanneld(String envValue) {
        Path bin = require(configuredDir(envValue), "flanneld", "flanneld " + VERSION);
        String version = VERSIONS.computeIfAbsent(bin, UpstreamFlannel::versionOf);
        if (!version.equals(VERSION) && !version.startsWith(VERSION + "-")) { // a local build may say v0.20.2-dirty
            String why = "upstream flanneld " + bin + " says its version is \"" + version + "\", the interop tests expect "
                    + VERSION + " (" + ENV + ")";
            if (integration()) {
                throw new IllegalStateException(why);
            }
            Assumptions.abort(why);
        }
        return bin;
    }

    /** The folder of upstream's binaries: the system property, else {@code envValue}; null when neither is set. */
    static Path configuredDir(String envValue) {
        String prop = System.getProperty(PROPERTY);
        String dir = prop != null && !prop.isBlank() ? prop : envValue;
        return dir == null || dir.isBlank() ? null : Path.of(dir).toAbsolutePath().normalize();
    }

    /** The folder of upstream's binaries as configured, or null (for runners that pass it on, e.g. into the kernel VM). */
    public static Path configuredDir() {
        return configuredDir(System.getenv(ENV));
    }

    /** Upstream's data files, {@code <projectRoot>/../shared/upstream}, normalized (it need not exist). */
    public static Path dataDir(Path projectRoot) {
        return projectRoot.resolve(DATA_DIR).toAbsolutePath().normalize();
    }

    private static Path require(Path dir, String name, String what) {
        if (dir == null) {
            Assumptions.abort("skipped: needs upstream's " + what + ": set " + ENV + " to a folder holding upstream's flanneld ("
                    + VERSION + ") and flannel (" + PLUGIN_VERSION + ")");
        }
        Path bin = dir.resolve(name);
        if (!Files.exists(bin)) {
            Assumptions.abort("skipped: needs upstream's " + what + ": no file " + bin + " (" + ENV + "=" + dir
                    + " should hold flanneld and flannel)");
        }
        if (!Files.isRegularFile(bin) || !Files.isExecutable(bin)) {
            String why = "upstream " + name + " " + bin + " is not an executable file (" + ENV + "=" + dir + ")";
            if (integration()) {
                throw new IllegalStateException(why);
            }
            Assumptions.abort(why);
        }
        return bin;
    }

    private static String versionOf(Path bin) {
        try {
            Process p = new ProcessBuilder(bin.toString(), "--version").redirectErrorStream(true).start();
            p.getOutputStream().close();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return "(no answer to --version within 30 s)";
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            return out.lines().reduce((a, b) -> b).orElse("").trim();
        } catch (IOException e) {
            return "(--version failed: " + e.getMessage() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "(interrupted)";
        }
    }

    private static boolean integration() {
        return Boolean.getBoolean("jflannel.integration");
    }
}
