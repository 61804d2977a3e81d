package org.jflannel.cni;

import java.util.List;
import java.util.Optional;
import org.jflannel.core.CniSubnetEnv;
import org.jflannel.core.ConfigException;

/**
 * What the plugin does to the host, apart from deciding: read subnet.env, find and run a delegate,
 * keep the scratch files, compare network namespaces. Two implementations: {@link LocalHost} (the
 * plugin's own JVM, started by the runtime) and {@link RemoteHost} (flanneld's JVM, each effect a
 * step the launcher performs in the host; docs/cni-plugin.md, "The fast path"). Every decision,
 * message and byte of output is made by the code that calls this, the same in both.
 */
interface Host {

    CniSubnetEnv readSubnetEnv(String path) throws ConfigException;

    /** invoke.FindInPath's search: the first regular file {@code plugin} in {@code dirs} (CNI_PATH). */
    Optional<String> findPlugin(String plugin, List<String> dirs);

    /** Runs the plugin at {@code path} (found by {@code plugin}) with CNI_COMMAND={@code command}. */
    Ran run(String plugin, String path, String command, byte[] stdin) throws StartFailure, CniException;

    /**
     * {@link #findPlugin}, then {@link #run} of what it found: empty when nothing is found. {@link RemoteHost}
     * asks for both in one step (and with them a scratch file written just before).
     */
    default Optional<Launched> findAndRun(String plugin, List<String> dirs, String command, byte[] stdin) throws CniException {
        Optional<String> path = findPlugin(plugin, dirs);
        if (path.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(new Launched(path.get(), run(plugin, path.get(), command, stdin), null));
        } catch (StartFailure e) {
            return Optional.of(new Launched(path.get(), null, e));
        }
    }

    void writeScratch(String dataDir, String containerId, byte[] bytes) throws CniException;

    /** The stored bytes, or empty when there is no file. */
    Optional<byte[]> readScratch(String dataDir, String containerId) throws CniException;

    void removeScratch(String dataDir, String containerId);

    List<String> scratchIds(String dataDir) throws CniException;

    /** Whether {@code netns} is the namespace the plugin runs in (skel's check after ADD and DEL). */
    boolean isOwnNetns(String netns);

    /** A delegate that ran: exit status (128 + signal when killed), stdout, stderr. */
    record Ran(int exit, byte[] stdout, byte[] stderr) {
    }

    /** A delegate found at {@code path}: it ran ({@code ran}), or could not be started ({@code failure}). */
    record Launched(String path, Ran ran, StartFailure failure) {
    }

    /**
     * The failure of an effect that the host reports with the next one ({@link RemoteHost} sends a
     * scratch file's write with the delegate's run): {@link FlannelPlugin} answers with {@code failure}
     * exactly as if the effect had thrown it, and the code between the two (which only finds and runs
     * the delegate) did not run, as the launcher stops at the first step that fails.
     */
    final class LateFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final transient CniException failure;

        LateFailure(CniException failure) {
            super(failure.getMessage(), null, false, false);
            this.failure = failure;
        }

        CniException failure() {
            return failure;
        }
    }

    /** The delegate could not be started; {@code reason} is Go's errno text ("permission denied"). */
    final class StartFailure extends Exception {
        private static final long serialVersionUID = 1L;

        StartFailure(String reason) {
            super(reason, null, false, false);
        }

        boolean textFileBusy() {
            return getMessage().equals("text file busy");
        }
    }

    /** The fast path cannot serve this request (thrown before any step with an effect ran): run the plugin's own JVM. */
    final class Fallback extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Fallback(String why) {
            super(why, null, false, false);
        }
    }
}
