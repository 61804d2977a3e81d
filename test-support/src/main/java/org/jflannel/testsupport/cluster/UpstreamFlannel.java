package org.jflannel.testsupport.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;

/**
 * Where the real upstream binaries for interop tests are: {@code <project root>/../shared/upstream/}
 * (flanneld v0.20.2, its CNI plugin, cnitool; see the README there). CI clones the project into
 * another folder with a read-only copy of {@code shared/} beside it, so the path is always taken
 * relative to the project root, never absolute. A missing binary fails under the integration
 * profile ({@code jflannel.integration=true}), naming the path, and skips the test elsewhere, as
 * the harness does for etcd and the namespace privileges.
 */
public final class UpstreamFlannel {
    /** The folder relative to the project root. */
    static final String DIR = "../shared/upstream";
    /** What {@code flanneld --version} prints for the binary the tests expect. */
    public static final String VERSION = "v0.20.2";

    private UpstreamFlannel() {
    }

    /** Upstream flanneld beside {@code projectRoot}; fails (integration) or skips when it is not there. */
    public static Path flanneld(Path projectRoot) {
        return require(projectRoot, "flanneld");
    }

    /** Upstream's CNI plugin (v1.9.1, static) beside {@code projectRoot}; fails (integration) or skips when it is not there. */
    public static Path plugin(Path projectRoot) {
        return require(projectRoot, "flannel");
    }

    /** libcni's cnitool beside {@code projectRoot}; fails (integration) or skips when it is not there. */
    public static Path cnitool(Path projectRoot) {
        return require(projectRoot, "cnitool");
    }

    /** The folder {@code <projectRoot>/../shared/upstream}, normalized (it need not exist). */
    public static Path dir(Path projectRoot) {
        return projectRoot.resolve(DIR).toAbsolutePath().normalize();
    }

    private static Path require(Path projectRoot, String name) {
        Path bin = dir(projectRoot).resolve(name);
        if (Files.isRegularFile(bin) && Files.isExecutable(bin)) {
            return bin;
        }
        String why = "upstream " + name + " missing or not executable: " + bin + " (expected beside the project as "
                + DIR + "/" + name + "; see shared/upstream/README.md)";
        if (Boolean.getBoolean("jflannel.integration")) {
            throw new IllegalStateException(why);
        }
        Assumptions.abort(why);
        throw new AssertionError(why); // not reached: abort throws
    }
}
