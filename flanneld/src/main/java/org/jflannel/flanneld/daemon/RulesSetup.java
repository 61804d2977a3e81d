package org.jflannel.flanneld.daemon;

import java.io.IOException;
import java.util.Deque;
import java.util.List;
import org.jflannel.core.Lease;
import org.jflannel.core.NetConf;
import org.jflannel.core.SubnetEnv;
import org.jflannel.flanneld.config.Options;
import org.jflannel.flanneld.health.Metrics;
import org.jflannel.flanneld.iptables.IptablesManager;
import org.jflannel.flanneld.nftables.NftablesManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * §9.5 steps 8–10: clean up the other implementation, initialise the chosen one (iptables, or
 * nftables with {@code EnableNFTables}), masquerade rules (--ip-masq), forward rules, resync (iptables only).
 */
final class RulesSetup {
    private static final Logger LOG = LoggerFactory.getLogger(RulesSetup.class);

    private final Options o;
    private final Metrics metrics;
    private final Deque<AutoCloseable> started;

    RulesSetup(Options o, Metrics metrics, Deque<AutoCloseable> started) {
        this.o = o;
        this.metrics = metrics;
        this.started = started;
    }

    void apply(NetConf conf, Lease lease, SubnetEnv.Previous previous) throws StartupError, InterruptedException {
        IptablesManager ipt = new IptablesManager(List.of(), o.iptablesResync(), metrics);
        started.push(ipt);
        if (conf.enableNFTables()) {
            LOG.info("Starting flannel in nftables mode");
            ipt.cleanup(); // §8.5: clean up the other implementation; a missing binary is skipped (Ours)
            applyNftables(conf, lease);
            return;
        }
        LOG.info("Starting flannel in iptables mode");
        new NftablesManager(List.of(), metrics).cleanup(); // §8.5: never fails
        boolean v4 = conf.enableIPv4();
        boolean v6 = conf.enableIPv6();
        if (o.ipMasq()) {
            try {
                if (v4) {
                    ipt.deletePreviousMasquerade(false, text(previous.network()), text(previous.subnet()),
                            conf.network().toString(), lease.subnet().toString());
                }
                if (v6) {
                    ipt.deletePreviousMasquerade(true, text(previous.ipv6Network()), text(previous.ipv6Subnet()),
                            conf.ipv6Network().toString(), lease.ipv6Subnet().toString());
                }
            } catch (IOException e) {
                throw new StartupError("Failed to setup masq rules, " + e.getMessage(), e);
            }
            if (v4) {
                ipt.setupMasquerade(false, conf.network().toString(), lease.subnet().toString(), o.ipMasqFullyRandomDisable());
            }
            if (v6) {
                ipt.setupMasquerade(true, conf.ipv6Network().toString(), lease.ipv6Subnet().toString(),
                        o.ipMasqFullyRandomDisable());
            }
        }
        if (o.iptablesForwardRules()) {
            if (v4) {
                ipt.setupForward(false, conf.network().toString());
            }
            if (v6) {
                ipt.setupForward(true, conf.ipv6Network().toString());
            }
        }
        ipt.startResync();
    }

    /** §8.4: init and masquerade failures are fatal, forward failures only logged (upstream). */
    private void applyNftables(NetConf conf, Lease lease) throws StartupError, InterruptedException {
        NftablesManager nft = new NftablesManager(List.of(), metrics);
        boolean v4 = conf.enableIPv4();
        boolean v6 = conf.enableIPv6();
        try {
            nft.init();
            if (o.ipMasq() && v4) {
                nft.setupMasquerade(false, conf.network().toString(), lease.subnet().toString(), o.ipMasqFullyRandomDisable());
            }
            if (o.ipMasq() && v6) {
                nft.setupMasquerade(true, conf.ipv6Network().toString(), lease.ipv6Subnet().toString(),
                        o.ipMasqFullyRandomDisable());
            }
        } catch (IOException e) {
            throw new StartupError(e.getMessage(), e);
        }
        if (o.iptablesForwardRules() && v4) {
            nft.setupForward(false, conf.network().toString());
        }
        if (o.iptablesForwardRules() && v6) {
            nft.setupForward(true, conf.ipv6Network().toString());
        }
    }

    private static String text(Object net) {
        return net == null ? null : net.toString();
    }
}
