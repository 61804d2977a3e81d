package org.jflannel.backend.udp;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Ip4Net;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.bpf.BpfLink;
import org.jflannel.linuxnet.bpf.BpfMap;
import org.jflannel.linuxnet.bpf.BpfProgram;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours: the udp backend's kernel datapath. Two tc programs ({@link KernelPrograms}) do in the
 * kernel what the packet threads do: flannel0's egress encapsulates packets for peers that
 * decapsulate in their kernel too (they say so in their lease, {@link UdpBackendData}), and the
 * external interface's ingress decapsulates datagrams from known peers. A 64 KB TCP super-packet
 * then crosses as one packet, as kernel VXLAN's do, with no copy to userspace. What the programs
 * leave alone takes the userspace path as before, so a node without this path, or an upstream
 * node, still exchanges upstream's datagrams with us.
 *
 * <p>Maps, written from here: {@code routes} (LPM: peer subnet → public IP; only peers that
 * decapsulate in their kernel and are reached through the external interface), {@code sources}
 * (public IP → that peer's subnet and mask; every peer), {@code own} (our lease) and
 * {@code counters} (packets each way, and rewrites that failed), {@code proof} (public IP → whether that
 * peer's kernel has been seen encapsulating to us, and the nonce of our latest probe to it: TCP and UDP go
 * to a routed peer from the kernel only when proven, {@link KernelPrograms#encap}) and {@code seen} (public
 * IP → what that peer's datagrams showed, counted by the decapsulating program, {@link ProofEvidence}).
 * Only the daemon writes a proof: a routed peer's starts unset and is made anew, unset, whenever its lease
 * changes; {@link KernelProbe} pings an unproven peer through the kernel with a nonce and proves it when its
 * kernel's answer carries that nonce ({@link PeerProof}). The programs stay attached while the links are
 * open: closing this, or the process ending, detaches them.
 *
 * <p>{@link UdpKernelMode#GPE} (the default, {@code JFLANNEL_UDP_KERNEL=gpe}): the ingress program rewrites a peer
 * kernel's datagram into a VXLAN-GPE one for a local external GPE device, whose receive path decapsulates it and clears
 * the kernel's tunnel marks, so the pod gets whole super-packets with no copy ({@link GpePath}, which makes that device
 * and its programs, and falls back to {@link UdpKernelMode#ENCAP} where that path does not deliver).
 * {@link UdpKernelMode#ENCAP} ({@code JFLANNEL_UDP_KERNEL=encap}): the ingress program only keeps the proofs and leaves
 * every datagram to the socket, whose packet threads hand peers' super-packets to the pod whole ({@link SocketReader});
 * decapsulating with adjust_room ({@link UdpKernelMode#FULL}) leaves the kernel's tunnel marks on them
 * (docs/benchmarks.md, "udp, session 9").
 */
final class KernelPath implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KernelPath.class);
    static final int MAX_PEERS = 1 << 16;
    static final int COUNTERS = 5;

    private final BpfMap routes;
    private final BpfMap sources;
    private final BpfMap own;
    private final BpfMap counters;
    private final BpfMap proof;
    private final BpfMap seen;
    private final List<AutoCloseable> owned;
    private final RtNetlink netlink;
    private final int extIndex;
    /** What the maps hold now: subnet → public IP (routes), public IP → subnet (sources). */
    private final Map<Ip4Net, Integer> routed = new HashMap<>();
    private final Map<Integer, Ip4Net> known = new HashMap<>();
    /**
     * Public IP → the routed peer whose proof and seen entries it is; a changed peer gets fresh (unset, zero) entries
     * and a new {@link Routed}. Guarded by this (the lease thread makes entries, the probe's thread writes proofs).
     */
    private final Map<Integer, Routed> proofs = new HashMap<>();
    private final Map<Integer, Routed> seenEntries = new HashMap<>();
    /** The routed peers, for {@link KernelProbe}'s thread. */
    private volatile List<Routed> routedPeers = List.of();
    /**
     * Per public IP, whether the kernel routes to it through the external interface: asked once, when
     * a peer with that address first needs it (a batch of thousands of leases costs no more lookups
     * than new addresses), forgotten when no peer has it any more.
     */
    private final Map<Integer, Boolean> viaExternal = new HashMap<>();

    /**
     * A routed peer's proof and seen entries, one object per making of them (identity: a peer whose entries were
     * removed and made again, even with an equal lease, is another), so that a proof decided for entries since
     * replaced is never written into the new ones.
     */
    static final class Routed {
        private final Peer peer;

        Routed(Peer peer) {
            this.peer = peer;
        }

        Peer peer() {
            return peer;
        }

        @Override
        public String toString() {
            return peer.toString();
        }
    }

    /** The mode attached: {@link UdpKernelMode#ENCAP} for GPE where its device could not be made. */
    private final UdpKernelMode mode;
    /** In {@link UdpKernelMode#GPE}: the VXLAN-GPE path, which swaps the external interface's ingress program; else null. */
    private final GpePath gpe;

    /**
     * The external interface's ingress link: in {@link UdpKernelMode#GPE}, replaced by {@link GpePath} once its trial is
     * over, and once more if that path turns out not to deliver.
     */
    static final class IngressLink implements AutoCloseable {
        private final int ifindex;
        private volatile BpfLink link;

        IngressLink(int ifindex) {
            this.ifindex = ifindex;
        }

        /** Attaches the first program. */
        void attach(BpfProgram program) throws NetlinkException {
            link = BpfLink.attach(program, ifindex, BpfLink.Hook.TCX_INGRESS);
        }

        /**
         * Attaches {@code program}, then detaches the one it replaces (so no datagram passes unhandled; a datagram the
         * old one rewrote carries the mark the new one lets through). False, after one line, when the kernel refused:
         * the caller tries again on its next call.
         */
        boolean swap(BpfProgram program) {
            BpfLink old = link;
            try {
                link = BpfLink.attach(program, ifindex, BpfLink.Hook.TCX_INGRESS);
                old.close();
                return true;
            } catch (NetlinkException | RuntimeException e) {
                LOG.warn("udp ingress program swap failed, retrying error={}", e.getMessage());
                return false;
            }
        }

        @Override
        public void close() {
            BpfLink l = link;
            if (l != null) {
                l.close();
            }
        }

        @Override
        public String toString() {
            return "ingress link " + link;
        }
    }

    private KernelPath(BpfMap routes, BpfMap sources, BpfMap own, BpfMap counters, BpfMap proof, BpfMap seen,
            List<AutoCloseable> owned, RtNetlink netlink, int extIndex, UdpKernelMode mode, GpePath gpe) {
        this.mode = mode;
        this.gpe = gpe;
        this.routes = routes;
        this.sources = sources;
        this.own = own;
        this.counters = counters;
        this.proof = proof;
        this.seen = seen;
        this.owned = owned;
        this.netlink = netlink;
        this.extIndex = extIndex;
    }

    /**
     * Loads and attaches both programs, inert until {@link #own} and {@link #peers} fill the maps.
     * Returns null, after one log line saying why, where the kernel or the interface does not allow
     * it (no bpf(2) permission, a kernel before 6.6 without tcx, an external interface without an
     * Ethernet header); the userspace path then carries everything. {@code mode}: not {@link UdpKernelMode#OFF};
     * {@link UdpKernelMode#GPE} runs as {@link UdpKernelMode#ENCAP} where its device cannot be made; {@code gpePort}
     * is that device's UDP port.
     */
    static KernelPath open(String tun, ExternalInterface ext, int port, UdpKernelMode mode, int gpePort) {
        if (!mode.attached()) {
            throw new IllegalArgumentException("udp kernel datapath: nothing to attach in mode " + mode);
        }
        List<AutoCloseable> owned = new ArrayList<>();
        RtNetlink nl = null;
        try {
            nl = RtNetlink.open();
            int tunIndex = nl.link(tun).map(Link::index)
                    .orElseThrow(() -> new NetlinkException("RTM_GETLINK", tun, 19, "tun device vanished"));
            Link extLink = nl.link(ext.index())
                    .orElseThrow(() -> new NetlinkException("RTM_GETLINK", ext.name(), 19, "external interface vanished"));
            if (extLink.mac() == null) {
                throw new IllegalStateException("external interface " + ext.name() + " has no Ethernet header");
            }
            BpfMap routes = keep(owned, BpfMap.create(BpfMap.Type.LPM_TRIE, "jfl_udp_routes", 8, 4, MAX_PEERS));
            BpfMap sources = keep(owned, BpfMap.create(BpfMap.Type.HASH, "jfl_udp_sources", 4, 8, MAX_PEERS));
            BpfMap own = keep(owned, BpfMap.create(BpfMap.Type.ARRAY, "jfl_udp_own", 4, 8, 1));
            BpfMap counters = keep(owned, BpfMap.create(BpfMap.Type.ARRAY, "jfl_udp_counts", 4, 8, COUNTERS));
            BpfMap proof = keep(owned, BpfMap.create(BpfMap.Type.HASH, "jfl_udp_proof", 4, KernelPrograms.PROOF_VALUE, MAX_PEERS));
            BpfMap seen = keep(owned, BpfMap.create(BpfMap.Type.HASH, "jfl_udp_seen", 4, ProofEvidence.VALUE_BYTES, MAX_PEERS));
            int nodeIp = Ip4Net.fromInet(ext.address());
            BpfProgram encap = keep(owned, BpfProgram.loadClassifier("jfl_udp_encap",
                    KernelPrograms.encap(routes, proof, counters, nodeIp, port, ext.index())));
            GpePath.Programs gpePrograms = null;
            if (mode == UdpKernelMode.GPE) {
                gpePrograms = GpePath.load(nl, owned, tun, tunIndex, gpePort, counters, (deliver, toPort, gpeMark, trial) ->
                        KernelPrograms.decap(sources, own, proof, seen, counters, nodeIp, port, tunIndex, deliver, toPort, gpeMark, trial));
                if (gpePrograms == null) {
                    mode = UdpKernelMode.ENCAP;
                }
            }
            BpfProgram decap = gpePrograms != null ? gpePrograms.trial() : keep(owned, BpfProgram.loadClassifier("jfl_udp_decap",
                    KernelPrograms.decap(sources, own, proof, seen, counters, nodeIp, port, tunIndex, mode == UdpKernelMode.FULL)));
            keep(owned, BpfLink.attach(encap, tunIndex, BpfLink.Hook.TCX_EGRESS));
            IngressLink ingress = keep(owned, new IngressLink(ext.index()));
            ingress.attach(decap);
            LOG.info("udp kernel datapath attached dev={} egress=jfl_udp_encap ext={} ingress=jfl_udp_decap port={} mode={}",
                    tun, ext.name(), port, mode.name());
            GpePath gpe = gpePrograms != null ? new GpePath(gpePrograms, ingress) : null;
            KernelPath path = new KernelPath(routes, sources, own, counters, proof, seen, owned, nl, ext.index(), mode, gpe);
            KernelProbe probe = KernelProbe.start(path); // after the links: closed before them (reverse order)
            if (probe != null) {
                owned.add(probe);
            } else if (gpe != null) { // nothing would watch the gpe path (checkGpe runs on the probe's thread)
                gpe.fallBack("no probe thread to watch it (CAP_NET_RAW?)", 0, 0);
            }
            return path;
        } catch (NetlinkException | RuntimeException e) {
            LOG.warn("udp kernel datapath unavailable, the packet threads carry everything dev={} ext={} error={}",
                    tun, ext.name(), e.getMessage());
            closeAll(owned);
            if (nl != null) {
                nl.close();
            }
            return null;
        }
    }

    static <T extends AutoCloseable> T keep(List<AutoCloseable> owned, T resource) {
        owned.add(resource);
        return resource;
    }

    /** Our lease: the decapsulating program only delivers into it. */
    void own(Ip4Net lease) throws NetlinkException {
        own.put(key(0), words(lease.address(), Ip4Net.mask(lease.prefixLength())));
    }

    /**
     * Brings the maps to {@code peers}: every peer may send to us; the ones that decapsulate in
     * their kernel and are reached through the external interface are sent to from here. A peer the
     * kernel cannot take is left to the userspace path, with one line.
     */
    synchronized void peers(Collection<Peer> peers) {
        Map<Ip4Net, Integer> wantRoutes = new HashMap<>();
        Map<Integer, Ip4Net> wantSources = new HashMap<>();
        Map<Integer, Routed> wantProofs = new HashMap<>();
        for (Peer p : peers) {
            wantSources.put(p.publicIp(), p.subnet());
            if (p.kernelDecap() && Boolean.TRUE.equals(viaExternal.computeIfAbsent(p.publicIp(), ip -> routedThroughExternal(p)))) {
                wantRoutes.put(p.subnet(), p.publicIp());
                Routed r = proofs.get(p.publicIp());
                wantProofs.put(p.publicIp(), r != null && r.peer.equals(p) ? r : new Routed(p));
            }
        }
        viaExternal.keySet().retainAll(wantSources.keySet());
        sync(wantSources, known, sources, ip -> words(ip), n -> words(n.address(), Ip4Net.mask(n.prefixLength())));
        // seen and proof entries before routes: a new route finds its peer unproven, never a stale proof
        sync(wantProofs, seenEntries, seen, ip -> words(ip), r -> new byte[ProofEvidence.VALUE_BYTES]);
        sync(wantProofs, proofs, proof, ip -> words(ip), r -> proofValue(false, 0));
        sync(wantRoutes, routed, routes, KernelPath::lpmKey, ip -> words(ip));
        routedPeers = List.copyOf(proofs.values());
    }

    /** The peers the kernel may send to, each with the entries made for it (the probe's thread reads this). */
    List<Routed> routedPeerList() {
        return routedPeers;
    }

    /**
     * Writes {@code r}'s proof: {@code proven} (the kernel sends it TCP and UDP) and the nonce its kernel's answer
     * must carry. False, with nothing written, when {@code r}'s entries have since been replaced or removed (a
     * changed lease) or the kernel refused (the caller tries again).
     */
    synchronized boolean writeProof(Routed r, boolean proven, long nonce) {
        if (proofs.get(r.peer.publicIp()) != r) {
            return false;
        }
        try {
            proof.put(words(r.peer.publicIp()), proofValue(proven, nonce));
            return true;
        } catch (NetlinkException e) {
            LOG.debug("udp kernel proof not written peer={} error={}", r, e.getMessage());
            return false;
        }
    }

    /** What {@code p}'s datagrams have shown ({@link ProofEvidence}); null when it has no entry or it cannot be read. */
    ProofEvidence seen(Peer p) {
        try {
            return seen.get(words(p.publicIp())).map(ProofEvidence::of).orElse(null);
        } catch (NetlinkException e) {
            return null;
        }
    }

    /**
     * Whether the kernel's proof map says the peer at {@code publicIp} is proven (what {@link KernelPrograms#encap}
     * reads): false also when it has no entry or it cannot be read (the kernel then sends it ICMP only).
     */
    boolean proven(int publicIp) {
        try {
            return proof.get(words(publicIp)).map(KernelPath::provenValue).orElse(false);
        } catch (NetlinkException e) {
            return false;
        }
    }

    /** {@code jfl_udp_proof}'s value: the u32 flag (native order), padding, the nonce's 8 bytes big-endian (as in the probe). */
    static byte[] proofValue(boolean proven, long nonce) {
        return ByteBuffer.allocate(KernelPrograms.PROOF_VALUE).order(ByteOrder.nativeOrder()).putInt(0, proven ? 1 : 0)
                .order(ByteOrder.BIG_ENDIAN).putLong(KernelPrograms.PROOF_NONCE_OFFSET, nonce).array();
    }

    private interface Encoder<T> {
        byte[] encode(T value);
    }

    private <K, V> void sync(Map<K, V> want, Map<K, V> have, BpfMap map, Encoder<K> keys, Encoder<V> values) {
        for (var it = have.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (!want.containsKey(e.getKey())) {
                try {
                    map.delete(keys.encode(e.getKey()));
                    it.remove();
                } catch (NetlinkException ex) {
                    LOG.warn("udp kernel map entry not removed map={} key={} error={}", map.name(), e.getKey(), ex.getMessage());
                }
            }
        }
        for (var e : want.entrySet()) {
            if (!e.getValue().equals(have.get(e.getKey()))) {
                try {
                    map.put(keys.encode(e.getKey()), values.encode(e.getValue()));
                    have.put(e.getKey(), e.getValue());
                } catch (NetlinkException ex) {
                    LOG.warn("udp kernel map entry not set, userspace path for it map={} key={} error={}", map.name(),
                            e.getKey(), ex.getMessage());
                }
            }
        }
    }

    /** Whether the kernel routes to the peer's public IP through the external interface; null (ask again later) on error. */
    private Boolean routedThroughExternal(Peer p) {
        InetAddress ip = p.endpoint().getAddress();
        try {
            List<Route> r = netlink.routeGet(ip);
            boolean ok = !r.isEmpty() && r.get(0).linkIndex() == extIndex;
            if (!ok) {
                LOG.info("udp peer reached through another interface, packet threads send to it subnet={} publicIp={}",
                        p.subnet(), ip.getHostAddress());
            }
            return ok;
        } catch (NetlinkException e) {
            LOG.warn("udp peer route lookup failed, packet threads send to it subnet={} error={}", p.subnet(), e.getMessage());
            return null;
        }
    }

    /** A value of {@code jfl_udp_proof} (its first 4 bytes non-zero: proven, {@link #proofValue}); any other length read as far as it goes. */
    static boolean provenValue(byte[] v) {
        for (int i = 0; i < Math.min(4, v.length); i++) {
            if (v[i] != 0) {
                return true;
            }
        }
        return false;
    }

    /** A value of {@code jfl_udp_counts} (a native-order u64); a shorter one read as its bytes, zero-extended. */
    static long counterValue(byte[] v) {
        if (v.length >= 8) {
            return ByteBuffer.wrap(v).order(ByteOrder.nativeOrder()).getLong();
        }
        ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder());
        b.put(v);
        return b.getLong(0);
    }

    /** Packets encapsulated, decapsulated, rewrites that failed halfway (dropped), datagrams to the GPE port refused. */
    long[] counts() {
        long[] out = new long[COUNTERS];
        for (int i = 0; i < COUNTERS; i++) {
            try {
                out[i] = counters.get(key(i)).map(KernelPath::counterValue).orElse(0L);
            } catch (NetlinkException e) {
                out[i] = -1;
            }
        }
        return out;
    }

    /** Whether peers' kernel datagrams are decapsulated through the VXLAN-GPE device (until {@link GpePath} falls back). */
    boolean gpe() {
        return gpe != null && gpe.active();
    }

    /** Whether the GPE path has delivered and every peer kernel datagram now takes it (its trial is over). */
    boolean gpeConfirmed() {
        return gpe != null && gpe.confirmed();
    }

    /**
     * The path peers' kernel datagrams take now, as {@code /metrics} labels it ({@link UdpNetwork#KERNEL_PATHS}):
     * {@code full}, {@code encap} (also GPE's fallback), {@code gpe_trial} (GPE on trial: one datagram a second through
     * the device, the rest to the packet threads) or {@code gpe}.
     */
    String path() {
        if (mode != UdpKernelMode.GPE) {
            return mode.toString();
        }
        return gpe.confirmed() ? "gpe" : gpe.active() ? "gpe_trial" : "encap";
    }

    /** In {@link UdpKernelMode#GPE}, called every few hundred milliseconds ({@link KernelProbe}'s thread): {@link GpePath#check}. */
    void checkGpe(long now) {
        GpePath g = gpe;
        if (g == null || !g.active()) {
            return;
        }
        long[] c = counts();
        g.check(now, c[KernelPrograms.COUNT_DECAP], c[KernelPrograms.COUNT_GATE]);
    }

    /** Number of peers sent to from the kernel. */
    int routedPeers() {
        return routed.size();
    }

    /** Detaches the programs (links first), then drops the programs and maps. */
    @Override
    public void close() {
        List<AutoCloseable> reversed = new ArrayList<>(owned);
        Collections.reverse(reversed);
        closeAll(reversed);
        netlink.close();
    }

    static void closeAll(List<AutoCloseable> resources) {
        for (AutoCloseable r : resources) {
            try {
                r.close();
            } catch (Exception e) {
                LOG.warn("udp kernel datapath close failed what={} error={}", r, e.toString());
            }
        }
    }

    /** An array map's index, in host order. */
    private static byte[] key(int hostOrder) {
        return ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(hostOrder).array();
    }

    /** LPM key: prefix length (host order), then the network in network order. */
    private static byte[] lpmKey(Ip4Net net) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putInt(net.prefixLength())
                .order(ByteOrder.BIG_ENDIAN).putInt(net.address()).array();
    }

    /** Addresses and masks in network order, as the programs load them from packets. */
    private static byte[] words(int... values) {
        ByteBuffer b = ByteBuffer.allocate(4 * values.length).order(ByteOrder.BIG_ENDIAN);
        for (int v : values) {
            b.putInt(v);
        }
        return b.array();
    }
}
