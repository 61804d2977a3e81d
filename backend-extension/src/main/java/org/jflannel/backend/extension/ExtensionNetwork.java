package org.jflannel.backend.extension;

import java.util.List;
import java.util.Map;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.Network;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The extension backend's peers: per lease added {@code SubnetAddCommand}, per lease removed
 * {@code SubnetRemoveCommand}, with {@code SUBNET} and {@code PUBLIC_IP} of the peer and the
 * peer's backend data (its pre-startup output) on standard input. As upstream: leases of another
 * backend type are logged and ignored, a lease whose backend data is not a JSON string is logged
 * and skipped, and a failing command is logged with its exit status and output while the next
 * events go on. Nothing is re-run on reconcile: the commands' effects are the operator's to keep.
 */
public final class ExtensionNetwork implements Network {
    private static final Logger LOG = LoggerFactory.getLogger(ExtensionNetwork.class);

    private final Lease lease;
    private final int mtu;
    private final BackendConfig.Extension cfg;
    private final CommandRunner runner;
    private volatile boolean closed;
    private int failures;

    ExtensionNetwork(Lease lease, int mtu, BackendConfig.Extension cfg, CommandRunner runner) {
        this.lease = lease;
        this.mtu = mtu;
        this.cfg = cfg;
        this.runner = runner;
    }

    @Override
    public Lease lease() {
        return lease;
    }

    @Override
    public int mtu() {
        return mtu;
    }

    /** Commands that failed (exit status, could not start, killed) since start. */
    public int failures() {
        return failures;
    }

    @Override
    public void apply(List<LeaseEvent> batch) {
        for (LeaseEvent e : batch) {
            if (closed) {
                return;
            }
            boolean added = e.type() == LeaseEvent.Type.ADDED;
            Lease peer = e.lease();
            if (peer.sameSubnets(lease)) {
                continue;
            }
            LOG.info("lease {} subnet={} publicIp={}", added ? "added" : "removed", peer.subnet(), address(peer));
            if (!ExtensionBackend.TYPE.equals(peer.attrs().backendType())) {
                LOG.warn("lease ignored: not an extension lease subnet={} backendType={}", peer.subnet(), peer.attrs().backendType());
                continue;
            }
            String command = added ? cfg.subnetAddCommand() : cfg.subnetRemoveCommand();
            if (!ExtensionBackend.configured(command)) {
                continue;
            }
            String stdin = ExtensionBackend.decodeData(peer.attrs().backendData());
            if (stdin == null) {
                LOG.error("lease skipped: BackendData is not a JSON string subnet={} backendData={}", peer.subnet(), peer.attrs().backendData());
                continue;
            }
            run(added ? "subnet-add" : "subnet-remove", command, peer, stdin);
        }
    }

    private void run(String phase, String command, Lease peer, String stdin) {
        Map<String, String> vars = Map.of("SUBNET", String.valueOf(peer.subnet()), "PUBLIC_IP", address(peer));
        try {
            CommandRunner.Result r = runner.run(command, vars, stdin);
            if (r.ok()) {
                LOG.info("extension command ran phase={} subnet={} command=\"{}\" output=\"{}\"", phase, peer.subnet(), command, r.output());
            } else {
                failures++;
                LOG.error("extension command failed phase={} subnet={} command=\"{}\" error=\"{}\" output=\"{}\"", phase, peer.subnet(),
                        command, ExtensionBackend.exit(r), r.output());
            }
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            closed = true;
        }
    }

    private static String address(Lease l) {
        return l.attrs().publicIp() == null ? "" : l.attrs().publicIp().getHostAddress();
    }

    @Override
    public void reconcile() {
        // the commands' effects are the operator's: nothing to compare them with
    }

    @Override
    public void close() {
        closed = true;
    }
}
