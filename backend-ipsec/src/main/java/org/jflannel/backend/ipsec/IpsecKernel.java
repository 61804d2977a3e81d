package org.jflannel.backend.ipsec;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jflannel.core.Lease;
import org.jflannel.core.peers.Devices;
import org.jflannel.core.peers.LeasePlan;
import org.jflannel.core.peers.PeerKernel;
import org.jflannel.core.peers.ReadBack;
import org.jflannel.core.peers.Writing;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.XfrmNetlink;
import org.jflannel.linuxnet.netlink.XfrmPolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ipsec backend's side of the peer loop. Per peer (an {@link IpsecPeer}), in upstream's order: the three
 * XFRM policies (replaced), the PSK for the peer's public IP, the IKE connection; removal unloads the
 * connection (ending its SAs) and deletes the policies. Owns the XFRM policies with our reqid (11) and
 * the connections in our charon: a reconcile re-writes what is missing and removes strays of both. At start-up
 * (the first batch) the policies an earlier flanneld left are adopted as they are: not replaced, so the
 * kernel's policy objects (and their add times) stay; charon, new, is told every PSK and connection.
 * lease-events thread only.
 */
final class IpsecKernel implements PeerKernel<IpsecPeer> {
    private static final Logger LOG = LoggerFactory.getLogger(IpsecKernel.class);

    private final IpsecPlanner planner;
    private final XfrmNetlink xfrm;
    private final Charon charon;
    private final String psk;

    IpsecKernel(IpsecPlanner planner, XfrmNetlink xfrm, Charon charon, String psk) {
        this.planner = planner;
        this.xfrm = xfrm;
        this.charon = charon;
        this.psk = psk;
    }

    @Override
    public LeasePlan<IpsecPeer> plan(Lease lease) {
        if (!IpsecPlanner.TYPE.equals(lease.attrs().backendType())) {
            return new LeasePlan.Skipped<>("not an ipsec lease (BackendType=" + lease.attrs().backendType() + ")", false);
        }
        if (lease.subnet() == null || lease.attrs().publicIp() == null) {
            return new LeasePlan.Skipped<>("no IPv4 subnet or public IPv4", true);
        }
        return new LeasePlan.Planned<>(lease, List.of(planner.plan(lease)), List.of());
    }

    @Override
    public List<IpsecPeer> forgotten(Lease lease) {
        return plan(lease) instanceof LeasePlan.Planned<IpsecPeer> p ? p.entries() : List.of();
    }

    @Override
    public String describe(IpsecPeer e) {
        return "conn=" + e.connName() + " peer=" + e.peerPublicIp();
    }

    @Override
    public List<IpsecPeer> write(List<IpsecPeer> entries, Writing<IpsecPeer> how) {
        Set<XfrmPolicy> present = how.first() ? presentPolicies() : Set.of();
        List<IpsecPeer> failed = new ArrayList<>();
        int adopted = 0;
        for (IpsecPeer e : entries) {
            adopted += (int) e.policies().stream().filter(present::contains).count();
            if (!writeOne(e, how.failing().contains(e), present)) {
                failed.add(e);
            }
        }
        if (adopted > 0) {
            LOG.info("ipsec policies adopted count={} peers={}", adopted, entries.size());
        }
        return failed;
    }

    /** The policies in the kernel now; none when the dump fails (then every policy is written, as without adoption). */
    private Set<XfrmPolicy> presentPolicies() {
        try {
            return new HashSet<>(xfrm.policies());
        } catch (IOException e) {
            LOG.warn("ipsec policies not read for adoption: writing them all error={}", e.getMessage());
            return Set.of();
        }
    }

    private boolean writeOne(IpsecPeer e, boolean failedBefore, Set<XfrmPolicy> present) {
        try {
            for (XfrmPolicy p : e.policies()) {
                if (!present.contains(p)) {
                    xfrm.replacePolicy(p);
                }
            }
            charon.loadShared(psk, List.of(e.peerPublicIp()));
            charon.loadConn(e.connName(), e.conn());
            return true;
        } catch (IOException ex) {
            if (failedBefore) {
                LOG.debug("ipsec peer still failing {} error={}", describe(e), ex.getMessage());
            } else {
                LOG.error("ipsec peer not programmed {} error={}", describe(e), ex.getMessage());
            }
            return false;
        }
    }

    @Override
    public boolean repair(ReadBack.Missing<IpsecPeer> missing, boolean failedBefore) {
        boolean ok = writeOne(missing.entry(), failedBefore, Set.of());
        if (ok) {
            LOG.info("ipsec peer repaired {} parts={}", describe(missing.entry()), missing.parts());
        }
        return ok;
    }

    @Override
    public void delete(IpsecPeer e) {
        try {
            charon.unloadConn(e.connName());
        } catch (IOException ex) {
            LOG.warn("ipsec connection not unloaded {} error={}", describe(e), ex.getMessage());
        }
        for (XfrmPolicy p : e.policies()) {
            deletePolicy(p);
        }
    }

    private void deletePolicy(XfrmPolicy p) {
        try {
            xfrm.deletePolicy(p);
        } catch (NetlinkException ex) {
            LOG.warn("ipsec policy not deleted policy={} error={}", p.describe(), ex.getMessage());
        }
    }

    @Override
    public Devices devices() {
        return Devices.READY; // no device; charon's own supervisor restarts it
    }

    @Override
    public ReadBack<IpsecPeer> readBack(Collection<IpsecPeer> desired, boolean withStrays) throws IOException {
        Set<XfrmPolicy> present = new HashSet<>(xfrm.policies());
        Set<String> conns = new HashSet<>(charon.vici(v -> v.listConns()));
        List<ReadBack.Missing<IpsecPeer>> missing = new ArrayList<>();
        Set<XfrmPolicy> wanted = new HashSet<>();
        Set<String> wantedConns = new HashSet<>();
        for (IpsecPeer e : desired) {
            int parts = conns.contains(e.connName()) ? 0 : 1;
            for (XfrmPolicy p : e.policies()) {
                parts += present.contains(p) ? 0 : 1;
            }
            wanted.addAll(e.policies());
            wantedConns.add(e.connName());
            if (parts > 0) {
                missing.add(new ReadBack.Missing<>(e, parts));
            }
        }
        List<Runnable> strays = new ArrayList<>();
        if (withStrays) {
            for (XfrmPolicy p : present) {
                if (ours(p) && !wanted.contains(p)) {
                    strays.add(() -> {
                        LOG.info("ipsec stray policy deleted policy={}", p.describe());
                        deletePolicy(p);
                    });
                }
            }
            for (String c : conns) {
                if (!wantedConns.contains(c)) {
                    strays.add(() -> {
                        try {
                            charon.unloadConn(c);
                        } catch (IOException ex) {
                            LOG.warn("ipsec stray connection not unloaded conn={} error={}", c, ex.getMessage());
                        }
                    });
                }
            }
        }
        return new ReadBack<>(missing, strays, 0);
    }

    /** A policy of ours: one ESP tunnel template with our reqid. */
    static boolean ours(XfrmPolicy p) {
        return p.tmpls().size() == 1 && p.tmpls().get(0).reqid() == IpsecPlanner.REQID
                && p.tmpls().get(0).proto() == XfrmPolicy.IPPROTO_ESP && p.tmpls().get(0).mode() == XfrmPolicy.XFRM_MODE_TUNNEL;
    }
}
