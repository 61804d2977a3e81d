package org.jflannel.testsupport.cluster;

import java.time.Duration;
import java.util.concurrent.Callable;
import org.jflannel.linuxnet.netns.NetNs;

/**
 * Waiting for a node's daemon to be ready, the same for a {@code flanneld} the harness started and a
 * {@code kube-flannel} container run from the image: bounded, and ended at once, with the tail of the
 * daemon's log, when the daemon exits meanwhile.
 */
final class Readiness {
    private static final int LOG_TAIL = 40;

    private Readiness() {
    }

    /** Waits until {@code ready} holds while {@code daemon} ({@code who} on {@code node}) runs. */
    static void await(String who, String node, ManagedProcess daemon, Duration within, Callable<Boolean> ready)
            throws Exception {
        Wait.until(who + " ready on " + node, within, () -> {
            if (!daemon.isAlive()) {
                throw new Wait.Abort(who + " on " + node + " exited " + daemon.exitCode().orElse(-1) + "; log "
                        + daemon.log() + ", tail:\n" + daemon.logTail(LOG_TAIL));
            }
            return ready.call();
        });
    }

    /** Whether {@code /readyz} on {@code port} in {@code ns} answers 200 (a node's own flanneld, probed as kubelet does). */
    static boolean readyz(NetNs ns, int port) throws Exception {
        return NsHttp.get(ns, "127.0.0.1", port, "/readyz").status() == 200;
    }
}
