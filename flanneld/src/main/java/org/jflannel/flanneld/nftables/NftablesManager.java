package org.jflannel.flanneld.nftables;

import java.io.IOException;
import java.util.List;
import org.jflannel.flanneld.health.Metrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns flannel's nftables tables (REFERENCE §8.4, §8.5): {@code ip flannel-ipv4} and
 * {@code ip6 flannel-ipv6}, each with the chains {@code postrtg} (nat, postrouting, srcnat) and
 * {@code forward} (filter, forward, filter). Every chain is flushed and rebuilt in one
 * {@code nft -f} transaction, so a re-run after a crash or a subnet change leaves exactly the
 * current rules; there is no periodic resync (upstream). Nothing is removed on exit.
 */
public final class NftablesManager {
    private static final Logger LOG = LoggerFactory.getLogger(NftablesManager.class);

    private final NftCli nft;
    private final Metrics metrics;

    /** {@code commandPrefix}: empty in the daemon; {@code ip netns exec <ns>} in tests. */
    public NftablesManager(List<String> commandPrefix, Metrics metrics) {
        this.nft = new NftCli(commandPrefix);
        this.metrics = metrics;
    }

    /**
     * Upstream {@code Init}: both tables, even in IPv4-only mode. Throws with upstream's fatal
     * messages ({@code no nftables support: <err>}, {@code nftables: couldn't initialise table <name>: <err>}).
     */
    public void init() throws IOException, InterruptedException {
        for (boolean ipv6 : new boolean[] {false, true}) {
            try {
                nft.check(NftPayload.supportProbe(ipv6));
            } catch (IOException e) {
                throw new IOException("no nftables support: " + e.getMessage(), e);
            }
            try {
                nft.run(NftPayload.initTable(ipv6));
            } catch (IOException e) {
                throw new IOException("nftables: couldn't initialise table " + NftPayload.table(ipv6) + ": " + e.getMessage(), e);
            }
            LOG.info("nftables table ready table={} family={}", NftPayload.table(ipv6), NftPayload.family(ipv6));
        }
    }

    /** §8.4: rebuilds {@code postrtg}; a failure is fatal upstream ({@code nftables: couldn't setup masq rules: <err>}). */
    public void setupMasquerade(boolean ipv6, String cluster, String pod, boolean fullyRandomDisabled)
            throws IOException, InterruptedException {
        LOG.info("nftables: setting up masking rules ({})", ipv6 ? "ipv6" : "ipv4");
        boolean fullyRandom = !fullyRandomDisabled && fullyRandomSupported(ipv6);
        try {
            nft.run(NftPayload.masquerade(ipv6, cluster, pod, fullyRandom));
        } catch (IOException e) {
            metrics.error("nftables");
            throw new IOException("nftables: couldn't setup masq rules: " + e.getMessage(), e);
        }
        LOG.info("nftables masquerade rules in place table={} cluster={} subnet={} fullyRandom={}", NftPayload.table(ipv6),
                cluster, pod, fullyRandom);
    }

    /** §8.4: rebuilds {@code forward}; errors are only logged (upstream). */
    public void setupForward(boolean ipv6, String cluster) throws InterruptedException {
        LOG.info("nftables: setting up forward rules ({})", ipv6 ? "ipv6" : "ipv4");
        try {
            nft.run(NftPayload.forward(ipv6, cluster));
            LOG.info("nftables forward rules in place table={} cluster={}", NftPayload.table(ipv6), cluster);
        } catch (IOException e) {
            metrics.error("nftables");
            LOG.error("nftables: couldn't setup forward rules: {}", e.getMessage());
        }
    }

    /** Upstream {@code checkRandomfully}: a check-only transaction on a test chain accepts {@code masquerade fully-random}. */
    public boolean fullyRandomSupported(boolean ipv6) throws InterruptedException {
        try {
            nft.check(NftPayload.fullyRandomProbe(ipv6));
            return true;
        } catch (IOException e) {
            LOG.warn("nftables: random-fully unsupported error={}", e.getMessage());
            return false;
        }
    }

    /** §8.5 (iptables mode): deletes both tables; never fails, errors are logged at debug. */
    public void cleanup() throws InterruptedException {
        try {
            nft.run(NftPayload.deleteTables());
            LOG.debug("nftables tables cleaned up tables={},{}", NftPayload.TABLE_V4, NftPayload.TABLE_V6);
        } catch (IOException e) {
            LOG.debug("nftables cleanup failed error={}", e.getMessage());
        }
    }
}
