package org.jflannel.flanneld.iptables;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jflannel.flanneld.health.Metrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns flannel's iptables chains and rules (REFERENCE §8.1–8.3, 8.5): {@code FLANNEL-POSTRTG} in
 * {@code nat} with its {@code POSTROUTING} jump, {@code FLANNEL-FWD} in {@code filter} with its
 * {@code FORWARD} jump, for IPv4 (iptables) and IPv6 (ip6tables). Rule sets are bootstrapped
 * synchronously (so subnet.env is written after they are in place) and then checked every
 * {@code --iptables-resync} seconds on the {@code iptables-resync} thread. Nothing is removed on exit.
 */
public final class IptablesManager implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(IptablesManager.class);
    private static final int MAX_JUMP_DELETES = 10;

    private final IptablesCli v4;
    private final IptablesCli v6;
    private final int resyncSeconds;
    private final Metrics metrics;
    private final List<RuleSet> sets = new CopyOnWriteArrayList<>();
    private ScheduledExecutorService resync;

    /** {@code commandPrefix}: empty in the daemon; {@code ip netns exec <ns>} in tests. */
    public IptablesManager(List<String> commandPrefix, int resyncSeconds, Metrics metrics) {
        this.v4 = new IptablesCli(false, commandPrefix);
        this.v6 = new IptablesCli(true, commandPrefix);
        this.resyncSeconds = resyncSeconds;
        this.metrics = metrics;
    }

    private IptablesCli cli(boolean ipv6) {
        return ipv6 ? v6 : v4;
    }

    /**
     * §8.3: when the network or subnet of the previous subnet.env differs from the current one, the
     * old masquerade rules are deleted first. A failure here is fatal ({@code Failed to setup masq rules}).
     */
    public void deletePreviousMasquerade(boolean ipv6, String prevCluster, String prevPod, String cluster, String pod)
            throws IOException, InterruptedException {
        if (prevCluster == null || prevPod == null || (prevCluster.equals(cluster) && prevPod.equals(pod))) {
            return;
        }
        LOG.info("Current network or subnet ({}, {}) is not equal to previous one ({}, {}), trying to recycle old iptables rules",
                cluster, pod, prevCluster, prevPod);
        for (boolean randomFully : new boolean[] {true, false}) { // the old rules may have been written either way
            new RuleSet(family(ipv6) + " old masquerade", cli(ipv6),
                    FlannelRules.masquerade(prevCluster, prevPod, ipv6, randomFully)).teardown();
        }
    }

    /** §8.1: bootstraps the masquerade rules and registers them for resync; errors are logged (upstream). */
    public void setupMasquerade(boolean ipv6, String cluster, String pod, boolean randomFullyDisabled) throws InterruptedException {
        LOG.info("Setting up masking rules family={}", family(ipv6));
        boolean randomFully;
        try {
            randomFully = !randomFullyDisabled && cli(ipv6).atLeast162();
        } catch (IOException e) {
            fail("Failed to setup IPTables. " + cli(ipv6).binary() + " binary was not found", e);
            return;
        }
        setup(new RuleSet(family(ipv6) + " masquerade", cli(ipv6), FlannelRules.masquerade(cluster, pod, ipv6, randomFully)));
    }

    /** §8.2: bootstraps the forward rules and registers them for resync; errors are logged. */
    public void setupForward(boolean ipv6, String cluster) throws InterruptedException {
        LOG.info("Changing default FORWARD chain policy to ACCEPT family={}", family(ipv6));
        setup(new RuleSet(family(ipv6) + " forward", cli(ipv6), FlannelRules.forward(cluster)));
    }

    private void setup(RuleSet set) throws InterruptedException {
        try {
            set.bootstrap();
        } catch (IptablesCli.MissingBinaryException e) {
            fail("Failed to setup IPTables. iptables binary was not found", e);
            return; // upstream: no resync loop without the binary
        } catch (IOException e) {
            fail("Failed to bootstrap IPTables set=" + set.name(), e);
        }
        sets.add(set);
    }

    /** Starts the resync thread: every {@code --iptables-resync} seconds each set is checked and rebuilt if needed. */
    public synchronized void startResync() {
        if (resync != null || resyncSeconds <= 0) {
            return;
        }
        resync = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "iptables-resync");
            t.setDaemon(true);
            return t;
        });
        resync.scheduleWithFixedDelay(this::resyncQuietly, resyncSeconds, resyncSeconds, TimeUnit.SECONDS);
    }

    private void resyncQuietly() {
        try {
            resyncOnce();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One resync pass over every set (v4 masq, v4 fwd, v6 masq, v6 fwd, in set-up order); returns the sets rebuilt. */
    public int resyncOnce() throws InterruptedException {
        int rebuilt = 0;
        for (RuleSet set : sets) {
            try {
                if (set.ensure()) {
                    rebuilt++;
                    metrics.addRepairs("iptables", 1);
                }
            } catch (IOException e) {
                fail("Failed to ensure iptables rules set=" + set.name(), e);
            }
        }
        return rebuilt;
    }

    /**
     * §8.5 Ours: removes the jump rules first, then flushes and deletes {@code FLANNEL-POSTRTG} in
     * {@code nat} and {@code FLANNEL-FWD} in {@code filter}, for both families. Never fails; a
     * missing binary skips that family with a log line.
     */
    public void cleanup() throws InterruptedException {
        for (IptablesCli cli : List.of(v4, v6)) {
            try {
                for (IptRule jump : FlannelRules.jumps()) {
                    for (int i = 0; i < MAX_JUMP_DELETES && cli.exists(jump); i++) {
                        quiet(cli, concat("-t", jump.table(), jump.withAction("-D")));
                    }
                }
                for (String[] chain : new String[][] {{"nat", FlannelRules.POSTRTG}, {"filter", FlannelRules.FWD}}) {
                    if (cli.chainExists(chain[0], chain[1])) {
                        quiet(cli, List.of("-t", chain[0], "-F", chain[1]));
                        quiet(cli, List.of("-t", chain[0], "-X", chain[1]));
                    }
                }
                LOG.info("iptables rules cleaned up binary={}", cli.binary());
            } catch (IptablesCli.MissingBinaryException e) {
                LOG.info("iptables cleanup skipped binary={} reason={}", cli.binary(), e.getMessage());
            } catch (IOException e) {
                LOG.debug("iptables cleanup failed binary={} error={}", cli.binary(), e.getMessage());
            }
        }
    }

    private static void quiet(IptablesCli cli, List<String> args) throws IOException, InterruptedException {
        IptablesCli.Result r = cli.iptables(args);
        if (r.status() != 0) {
            LOG.debug("iptables cleanup step failed args={} output={}", args, r.output().trim());
        }
    }

    private static List<String> concat(String a, String b, List<String> rest) {
        List<String> out = new java.util.ArrayList<>(List.of(a, b));
        out.addAll(rest);
        return out;
    }

    private void fail(String message, IOException e) {
        metrics.error("iptables");
        LOG.error("{}: {}", message, e.getMessage());
    }

    private static String family(boolean ipv6) {
        return ipv6 ? "ipv6" : "ipv4";
    }

    @Override
    public synchronized void close() {
        if (resync != null) {
            resync.shutdownNow();
            resync = null;
        }
    }
}
