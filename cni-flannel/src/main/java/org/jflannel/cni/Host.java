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
