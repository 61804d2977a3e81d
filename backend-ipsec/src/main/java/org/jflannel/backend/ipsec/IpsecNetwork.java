package org.jflannel.backend.ipsec;

import java.util.concurrent.Executor;
import org.jflannel.core.Lease;
import org.jflannel.core.peers.HealTiming;
import org.jflannel.core.peers.LoopCounters;
import org.jflannel.core.peers.PeerNetwork;

/**
 * The registered ipsec network: per peer an IKE connection in our charon and three XFRM policies, kept
 * by the shared peer loop over {@link IpsecKernel}; healed by a timer (no netlink watch: the SPD has no
 * device whose events would tell us). Closing ends charon (upstream: SIGTERM on exit); the XFRM policies
 * stay, as upstream leaves them.
 */
public final class IpsecNetwork extends PeerNetwork<IpsecPeer> {
    private final Charon charon;

    IpsecNetwork(Lease own, int mtu, IpsecKernel kernel, Charon charon, AutoCloseable handles) {
        super("ipsec", own, mtu, kernel, LoopCounters.NONE, handles);
        this.charon = charon;
    }

    /** Our charon (tests, and a future status endpoint). */
    Charon charon() {
        return charon;
    }

    void startHealing(Executor leaseEvents, HealTiming timing) {
        loop.heal(leaseEvents, timing, "ipsec-timer", healing -> () -> { });
    }
}
