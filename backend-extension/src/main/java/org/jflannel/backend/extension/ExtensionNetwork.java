package org.jflannel.backend.extension;

import org.jflannel.core.BackendConfig;
import org.jflannel.core.Lease;
import org.jflannel.core.peers.LoopCounters;
import org.jflannel.core.peers.PeerNetwork;

/**
 * The registered extension network: its peers kept by the backends' one loop ({@link PeerNetwork} over
 * {@link ExtensionCommands}: per lease added {@code SubnetAddCommand}, per lease removed
 * {@code SubnetRemoveCommand}, run as upstream runs them).
 */
public final class ExtensionNetwork extends PeerNetwork<ExtensionPeer> {
    private final ExtensionCommands commands;

    ExtensionNetwork(Lease lease, int mtu, BackendConfig.Extension cfg, CommandRunner runner) {
        this(lease, mtu, new ExtensionCommands(cfg, runner));
    }

    private ExtensionNetwork(Lease lease, int mtu, ExtensionCommands commands) {
        super(ExtensionBackend.TYPE, lease, mtu, commands, LoopCounters.NONE, () -> { });
        this.commands = commands;
    }

    /** Commands that failed (exit status, could not start, killed) since start. */
    public int failures() {
        return commands.failures();
    }
}
