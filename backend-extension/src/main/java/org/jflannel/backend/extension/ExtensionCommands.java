package org.jflannel.backend.extension;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.Lease;
import org.jflannel.core.peers.LeasePlan;
import org.jflannel.core.peers.OwnTable;
import org.jflannel.core.peers.PeerLoop;
import org.jflannel.core.peers.ReadBack;
import org.jflannel.core.peers.Writing;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The extension backend's side of the shared {@link PeerLoop}: writing a peer runs {@code SubnetAddCommand},
 * deleting it {@code SubnetRemoveCommand}, with {@code SUBNET} and {@code PUBLIC_IP} of the peer and its
 * backend data on standard input. As upstream: leases of another backend type are logged and ignored, a
 * lease whose backend data is not a JSON string is logged and skipped, a changed lease only has its add
 * command run again (never remove-then-add), a lease that turns unusable is left alone, and a failing
 * command is logged with its exit status and output while the next events go on. The commands' effects
 * are the operator's: nothing to read back, nothing re-run on reconcile.
 */
final class ExtensionCommands implements OwnTable<ExtensionPeer> {
    private static final Logger LOG = LoggerFactory.getLogger(ExtensionNetwork.class);

    private final BackendConfig.Extension cfg;
    private final CommandRunner runner;
    private int failures;

    ExtensionCommands(BackendConfig.Extension cfg, CommandRunner runner) {
        this.cfg = cfg;
        this.runner = runner;
    }

    /** Commands that failed (exit status, could not start, killed) since start. */
    int failures() {
        return failures;
    }

    @Override
    public LeasePlan<ExtensionPeer> plan(Lease peer) {
        if (!ExtensionBackend.TYPE.equals(peer.attrs().backendType())) {
            return LeasePlan.ignored("lease ignored: not an extension lease subnet=" + peer.subnet()
                    + " backendType=" + peer.attrs().backendType());
        }
        String stdin = ExtensionBackend.decodeData(peer.attrs().backendData());
        if (stdin == null) {
            return LeasePlan.skipped("lease skipped: BackendData is not a JSON string subnet=" + peer.subnet()
                    + " backendData=" + peer.attrs().backendData());
        }
        return LeasePlan.of(peer, List.of(new ExtensionPeer(peer.subnet(), address(peer), stdin)));
    }

    /** A removal of a lease we hold no plan for: its remove command all the same, if its data decodes. */
    @Override
    public List<ExtensionPeer> forgotten(Lease peer) {
        return plan(peer) instanceof LeasePlan.Planned<ExtensionPeer> p ? p.entries() : List.of();
    }

    @Override
    public String describe(ExtensionPeer p) {
        return "subnet=" + p.subnet() + " publicIp=" + p.publicIp();
    }

    @Override
    public List<ExtensionPeer> write(List<ExtensionPeer> entries, Writing<ExtensionPeer> how) throws InterruptedException {
        List<ExtensionPeer> failed = new ArrayList<>();
        for (ExtensionPeer p : entries) {
            if (ExtensionBackend.configured(cfg.subnetAddCommand()) && !run("subnet-add", cfg.subnetAddCommand(), p)) {
                failed.add(p);
            }
        }
        return failed;
    }

    /** Upstream runs only the add command when a lease changes, and nothing when it turns unusable. */
    @Override
    public boolean keepsOnChange(ExtensionPeer stale, List<ExtensionPeer> next) {
        return true;
    }

    /** Never asked: an own table has nothing missing. */
    @Override
    public boolean repair(ReadBack.Missing<ExtensionPeer> missing, boolean failedBefore) throws InterruptedException {
        return write(List.of(missing.entry()), new Writing<>(false, false, java.util.Set.of())).isEmpty();
    }

    @Override
    public void delete(ExtensionPeer p) {
        if (!ExtensionBackend.configured(cfg.subnetRemoveCommand())) {
            return;
        }
        try {
            run("subnet-remove", cfg.subnetRemoveCommand(), p);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the loop stops at its next event
        }
    }

    private boolean run(String phase, String command, ExtensionPeer p) throws InterruptedException {
        Map<String, String> vars = Map.of("SUBNET", String.valueOf(p.subnet()), "PUBLIC_IP", p.publicIp());
        CommandRunner.Result r = runner.run(command, vars, p.stdin());
        if (r.ok()) {
            LOG.info("extension command ran phase={} subnet={} command=\"{}\" output=\"{}\"", phase, p.subnet(), command, r.output());
            return true;
        }
        failures++;
        LOG.error("extension command failed phase={} subnet={} command=\"{}\" error=\"{}\" output=\"{}\"", phase, p.subnet(),
                command, ExtensionBackend.exit(r), r.output());
        return false;
    }

    private static String address(Lease l) {
        return l.attrs().publicIp() == null ? "" : l.attrs().publicIp().getHostAddress();
    }
}
