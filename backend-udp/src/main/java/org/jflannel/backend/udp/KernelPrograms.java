package org.jflannel.backend.udp;

import static org.jflannel.linuxnet.bpf.BpfAsm.FP;
import static org.jflannel.linuxnet.bpf.BpfAsm.R0;
import static org.jflannel.linuxnet.bpf.BpfAsm.R1;
import static org.jflannel.linuxnet.bpf.BpfAsm.R2;
import static org.jflannel.linuxnet.bpf.BpfAsm.R3;
import static org.jflannel.linuxnet.bpf.BpfAsm.R4;
import static org.jflannel.linuxnet.bpf.BpfAsm.R5;
import static org.jflannel.linuxnet.bpf.BpfAsm.R6;
import static org.jflannel.linuxnet.bpf.BpfAsm.R7;
import static org.jflannel.linuxnet.bpf.BpfAsm.R8;
import static org.jflannel.linuxnet.bpf.BpfAsm.R9;

import org.jflannel.linuxnet.bpf.BpfAsm.Cond;
import org.jflannel.linuxnet.bpf.BpfAsm.Size;
import org.jflannel.linuxnet.bpf.BpfAsm;
import org.jflannel.linuxnet.bpf.BpfMap;
import org.jflannel.packet.Ipv4;

/**
 * The two tc programs of the kernel datapath ({@link KernelPath}), generated per node because the
 * node's address, port and interface indexes are constants in them. Both produce or accept
 * exactly upstream's wire format: an outer IPv4 + UDP header ({@code <node>:<port> → <peer>:<port>})
 * around the bare inner IPv4 packet, TTL decremented on each side (REFERENCE §7).
 *
 * <p>Each program handles only the plain case and returns {@code TCX_NEXT} for everything else,
 * which then takes the userspace path unchanged (flannel0's queue, or the UDP socket): IP options,
 * fragments, TTL ≤ 1, peers not in the maps, sources outside the sender's lease, GRO trains. So
 * drops, their counters and log lines, and the ICMP replies stay where they were.
 *
 * <p>Values in maps and packet words are compared in network byte order as loaded (the programs
 * never convert an address). Stack layout is noted per program; every access is size-aligned.
 */
final class KernelPrograms {
    /** tcx verdicts. */
    static final int TCX_NEXT = -1;
    static final int TCX_DROP = 2;
    /** {@code bpf_skb_adjust_room} mode and flags. */
    private static final int ADJ_ROOM_MAC = 1;
    private static final int F_FIXED_GSO = 1;
    private static final int F_ENCAP_L3_IPV4 = 1 << 1;
    private static final int F_ENCAP_L4_UDP = 1 << 4;
    /** Clears the UDP tunnel GSO marks on decapsulation (bpf-next, August 2026; EINVAL before). */
    private static final int F_DECAP_L4_UDP = 1 << 10;
    private static final int EINVAL = 22;
    private static final int IPPROTO_ICMP = 1;
    private static final int IPPROTO_TCP = 6;
    private static final int F_INGRESS = 1;
    /** {@code __sk_buff} offsets. */
    private static final int SKB_LEN = 0;
    private static final int SKB_MARK = 8;
    private static final int SKB_PROTOCOL = 16;
    /** {@code bpf_skb_store_bytes}: keeps a CHECKSUM_COMPLETE skb's sum right. */
    private static final int F_RECOMPUTE_CSUM = 1;
    /** The VXLAN-GPE header: its length, and its first word as a little-endian store writes it (flags I|P, next protocol IPv4). */
    static final int GPE_HLEN = 8;
    private static final int GPE_FLAGS_IPV4 = 0x0100_000c;
    /** ETH_P_IP as {@code __sk_buff.protocol} holds it (network order in a host-order u32). */
    private static final int ETH_P_IP_NET = 0x0008;
    private static final int ETH_HLEN = 14;
    /** Counter slots ({@link KernelPath#COUNTERS}). */
    static final int COUNT_ENCAP = 0;
    static final int COUNT_DECAP = 1;
    static final int COUNT_FAILED = 2;
    /** Datagrams to the GPE port that {@link #decap} did not write (dropped on the external interface or at the gate). */
    static final int COUNT_REFUSED = 3;
    /** Packets the GPE device's gate handed to flannel0: against {@link #COUNT_DECAP}, whether that path delivers. */
    static final int COUNT_GATE = 4;

    private KernelPrograms() {
    }

    /**
     * flannel0's egress: a packet the kernel routed into flannel0 whose destination is in the
     * {@code routes} LPM trie (peers that decapsulate in their kernel) gets its outer headers, the
     * inner TTL decremented, and leaves through {@code outIfindex} towards the peer, with its GSO
     * size kept: a 64 KB TCP super-packet stays one packet until a device segments it.
     *
     * <p>Only ICMP goes to a peer on the lease's word alone. A TCP or UDP packet leaves here only when
     * the peer's {@code proof} entry is set (its first u32 non-zero), which the daemon does when the
     * peer's kernel answered a probe carrying a nonce only that peer saw ({@link KernelProbe}, {@link #decap}'s
     * counts): only a peer's encapsulating program answers with UDP checksum 0, and a node attaches it
     * together with its decapsulating one. What such a peer's kernel would not take (a whole
     * super-packet, a partial inner checksum) so never goes to a node whose kernel does not
     * decapsulate: an upstream node, or one whose lease claims it wrongly (a stale lease, a restart
     * with the kernel datapath off whose new lease has not arrived yet, a mistaken write).
     *
     * <p>Stack: -48 inner IPv4 header (20); -56 LPM key {prefixlen, dst}; -60 proof key (the peer's
     * public IP); -88 outer IPv4 + UDP header (28); -64 the counter key, once that header is in the packet.
     *
     * @param nodeIp the outer source as {@link Ipv4} reads addresses (big-endian int): the socket's address
     */
    static byte[] encap(BpfMap routes, BpfMap proof, BpfMap counters, int nodeIp, int port, int outIfindex) {
        BpfAsm a = new BpfAsm();
        a.movReg(R6, R1);
        loadBytes(a, 0, -48, 20);
        a.load(Size.B, R1, FP, -48).jump(Cond.NE, R1, 0x45, "next");        // IPv4 without options
        a.load(Size.H, R1, FP, -42).and(R1, 0xff3f).jump(Cond.NE, R1, 0, "next"); // not a fragment
        a.load(Size.B, R1, FP, -40).jump(Cond.LE, R1, 1, "next");          // TTL ≤ 1: userspace drops it
        a.storeImm(Size.W, FP, -56, 32).load(Size.W, R1, FP, -32).store(Size.W, FP, -52, R1);
        a.loadMap(R1, routes).movReg(R2, FP).add(R2, -56).call(BpfAsm.MAP_LOOKUP_ELEM);
        a.jump(Cond.EQ, R0, 0, "next");
        a.load(Size.W, R7, R0, 0);                                          // peer's public IP
        // ICMP leaves whole and fully checksummed, so any receiver takes it; everything else (TCP and UDP
        // super-packets, partial checksums) only to a peer whose kernel has been seen encapsulating to us
        a.load(Size.B, R1, FP, -39).jump(Cond.EQ, R1, IPPROTO_ICMP, "proven");
        a.store(Size.W, FP, -60, R7).loadMap(R1, proof).movReg(R2, FP).add(R2, -60).call(BpfAsm.MAP_LOOKUP_ELEM);
        a.jump(Cond.EQ, R0, 0, "next");
        a.load(Size.W, R1, R0, 0).jump(Cond.EQ, R1, 0, "next");
        a.label("proven");
        a.load(Size.W, R1, R6, SKB_LEN).jump(Cond.GT, R1, 0xffff - UdpBackend.ENCAP_OVERHEAD, "next"); // BIG TCP: no room
        a.movReg(R1, R6).mov(R2, UdpBackend.ENCAP_OVERHEAD).mov(R3, ADJ_ROOM_MAC)
                .mov(R4, F_FIXED_GSO | F_ENCAP_L3_IPV4 | F_ENCAP_L4_UDP).call(BpfAsm.SKB_ADJUST_ROOM);
        a.jump(Cond.NE, R0, 0, "next");                                     // e.g. UDP GSO: untouched, userspace
        a.load(Size.W, R8, R6, SKB_LEN);
        // outer IPv4: 45 00 <len> | 00 00 40 00 (DF) | 40 (TTL 64) 11 (UDP) <csum> | src | dst
        a.movReg(R1, R8).toBe16(R1).lsh(R1, 16).or(R1, 0x45).store(Size.W, FP, -88, R1);
        a.storeImm(Size.W, FP, -84, 0x0040_0000);
        a.storeImm(Size.W, FP, -80, 64 | 17 << 8);
        a.storeImm(Size.W, FP, -76, Integer.reverseBytes(nodeIp));
        a.store(Size.W, FP, -72, R7);
        int p = Short.toUnsignedInt(Short.reverseBytes((short) port));
        a.storeImm(Size.W, FP, -68, p | p << 16);                          // source and destination port
        a.movReg(R1, R8).add(R1, -20).toBe16(R1).store(Size.W, FP, -64, R1); // UDP length; checksum 0
        a.mov(R1, 0).mov(R2, 0).movReg(R3, FP).add(R3, -88).mov(R4, 20).mov(R5, 0).call(BpfAsm.CSUM_DIFF);
        fold(a);
        a.store(Size.H, FP, -78, R0);
        storeBytes(a, 0, -88, UdpBackend.ENCAP_OVERHEAD);
        decrementTtl(a, UdpBackend.ENCAP_OVERHEAD, -40);
        count(a, counters, COUNT_ENCAP);
        // flannel0 has no link-layer header; redirect_neigh wants one to replace
        a.movReg(R1, R6).mov(R2, ETH_HLEN).mov(R3, 0).call(BpfAsm.SKB_CHANGE_HEAD);
        a.jump(Cond.NE, R0, 0, "failed");
        a.mov(R1, outIfindex).mov(R2, 0).mov(R3, 0).mov(R4, 0).call(BpfAsm.REDIRECT_NEIGH);
        a.exit();
        return verdicts(a, counters);
    }

    /**
     * The external interface's ingress: a datagram to {@code <nodeIp>:<port>} from a peer in
     * {@code sources} whose inner source lies in that peer's lease and whose inner destination lies
     * in our own ({@code own}, slot 0: network and mask) loses its outer headers, has its TTL
     * decremented, and enters as if flannel0 had received it. A GRO train (several datagrams in one
     * buffer, from the UDP socket's GRO on a real NIC) is left to the socket: only a buffer that is
     * exactly one inner packet, of any size, is taken.
     *
     * <p>A super-packet a peer's encapsulating program sent whole (a veth or bridge underlay carries
     * it so) is decapsulated whole. On this project's kernels no helper clears the kernel's tunnel marks
     * (skb->encapsulation, SKB_GSO_UDP_TUNNEL) that stay on it, so cni0, a bridge, segments it in
     * software on its way to the pod; that still measured faster than leaving it to the socket
     * (docs/benchmarks.md). Where the kernel knows {@code BPF_F_ADJ_ROOM_DECAP_L4_UDP} (in bpf-next
     * since August 2026; untested here, as no kernel on our machines has it) the marks
     * are cleared and it reaches the pod whole; elsewhere the first call fails with EINVAL and the
     * program calls again without the flag.
     *
     * <p>Before any inner check, a datagram from a routed peer is counted in its {@code seen} entry when it
     * says something about that peer's kernel ({@link #seen}: an answer to our probe, and by whom; a checksummed
     * TCP packet); the program never writes a proof, so no datagram, whoever forged it, changes one.
     *
     * <p>Stack: -48 outer IPv4 (20), -28 UDP (8), -20 inner IPv4 (20); -52 config key; -64 counter key;
     * -88 the inner ICMP header and nonce.
     *
     * @param nodeIp   our address as {@link Ipv4} reads addresses (big-endian int)
     */
    static byte[] decap(BpfMap sources, BpfMap own, BpfMap proof, BpfMap seen, BpfMap counters, int nodeIp, int port, int tunIfindex) {
        return decap(sources, own, proof, seen, counters, nodeIp, port, tunIfindex, true);
    }

    /**
     * {@link #decap} with {@code deliver} false: the program only counts what the senders' datagrams show and leaves
     * every datagram to the socket (the packet threads decapsulate; see {@link UdpKernelMode#ENCAP}).
     */
    static byte[] decap(BpfMap sources, BpfMap own, BpfMap proof, BpfMap seen, BpfMap counters, int nodeIp, int port, int tunIfindex,
            boolean deliver) {
        return decap(sources, own, proof, seen, counters, nodeIp, port, tunIfindex, deliver ? Deliver.REDIRECT : Deliver.SOCKET, 0, 0);
    }

    /** What {@link #decap} does with a datagram it accepts. */
    enum Deliver {
        /** Nothing: every datagram goes on to the socket (the packet threads decapsulate). */
        SOCKET,
        /** Strips the outer headers and redirects the inner packet into flannel0's receive path. */
        REDIRECT,
        /**
         * Rewrites the datagram in place into a VXLAN-GPE one to the local GPE device's port, which the
         * kernel's VXLAN receive path then decapsulates (clearing the tunnel GSO marks); see {@link #gpeGate}.
         */
        GPE
    }

    /**
     * {@link #decap} in mode {@code deliver}; with {@link Deliver#GPE}, {@code gpePort} is the GPE device's UDP
     * port and {@code gpeMark} the skb mark that {@link #gpeGate} requires (nonzero): the program marks the
     * datagrams it rewrote, and drops every datagram that arrives addressed to {@code gpePort} (the port adds no
     * way in beyond upstream's).
     */
    static byte[] decap(BpfMap sources, BpfMap own, BpfMap proof, BpfMap seen, BpfMap counters, int nodeIp, int port, int tunIfindex,
            Deliver deliver, int gpePort, int gpeMark) {
        return decap(sources, own, proof, seen, counters, nodeIp, port, tunIfindex, deliver, gpePort, gpeMark, null);
    }

    /** The least time between two datagrams a trial program ({@link #decap} with a {@code trial} map) rewrites. */
    static final int TRIAL_GAP_NANOS = 1_000_000_000;

    /**
     * {@link #decap}; with {@link Deliver#GPE} and a {@code trial} map (an array of one 8-byte slot: the monotonic time of
     * the last rewrite), a trial program: it rewrites at most one datagram every {@link #TRIAL_GAP_NANOS} and leaves
     * the others to the socket, so that a node can learn whether the GPE path delivers (a host firewall may drop UDP to
     * its port) at the cost of a few datagrams at most ({@link GpePath#check}).
     */
    static byte[] decap(BpfMap sources, BpfMap own, BpfMap proof, BpfMap seen, BpfMap counters, int nodeIp, int port, int tunIfindex,
            Deliver deliver, int gpePort, int gpeMark, BpfMap trial) {
        if (deliver == Deliver.GPE && (gpePort < 1 || gpePort > 0xffff || gpePort == port || gpeMark == 0)) {
            throw new IllegalArgumentException("gpe port: expected 1..65535 other than " + port + " and a nonzero mark, got "
                    + gpePort + " mark " + gpeMark);
        }
        BpfAsm a = new BpfAsm();
        a.movReg(R6, R1);
        a.load(Size.W, R1, R6, SKB_PROTOCOL).jump(Cond.NE, R1, ETH_P_IP_NET, "next");
        loadBytes(a, ETH_HLEN, -48, 48);
        a.load(Size.B, R1, FP, -48).jump(Cond.NE, R1, 0x45, "next");
        a.load(Size.B, R1, FP, -39).jump(Cond.NE, R1, 17, "next");
        a.load(Size.H, R1, FP, -42).and(R1, 0xff3f).jump(Cond.NE, R1, 0, "next");
        a.load(Size.W, R1, FP, -32).jump32(Cond.NE, R1, Integer.reverseBytes(nodeIp), "next");
        if (deliver == Deliver.GPE) { // only our programs send to the GPE port (other local addresses: the gate refuses)
            a.load(Size.H, R1, FP, -26).jump(Cond.NE, R1, be16(gpePort), "notGpePort");
            // rewritten by a program of ours before this one (two are attached for a moment while one replaces the other)
            a.load(Size.W, R1, R6, SKB_MARK).jump32(Cond.NE, R1, gpeMark, "refused").jump("next");
            a.label("notGpePort");
        }
        a.load(Size.H, R1, FP, -26).jump(Cond.NE, R1, Short.toUnsignedInt(Short.reverseBytes((short) port)), "next");
        a.load(Size.B, R1, FP, -20).jump(Cond.NE, R1, 0x45, "next");
        seen(a, proof, seen);
        if (deliver == Deliver.SOCKET) { // every datagram goes on to the socket
            a.label("next").mov(R0, TCX_NEXT).exit();
            return a.build();
        }
        a.load(Size.B, R1, FP, -12).jump(Cond.LE, R1, 1, "next");
        // exactly one inner packet: its total length is the rest of the buffer
        a.load(Size.H, R1, FP, -18).toBe16(R1).load(Size.W, R2, R6, SKB_LEN).add(R2, -(ETH_HLEN + UdpBackend.ENCAP_OVERHEAD));
        a.jumpReg(Cond.NE, R1, R2, "next");
        a.storeImm(Size.W, FP, -52, 0).loadMap(R1, own).movReg(R2, FP).add(R2, -52).call(BpfAsm.MAP_LOOKUP_ELEM);
        a.jump(Cond.EQ, R0, 0, "next");
        a.load(Size.W, R1, R0, 0).load(Size.W, R2, R0, 4).jump(Cond.EQ, R2, 0, "next");
        a.load(Size.W, R3, FP, -4).andReg(R3, R2).jumpReg(Cond.NE, R3, R1, "next"); // inner dst in our lease
        a.loadMap(R1, sources).movReg(R2, FP).add(R2, -36).call(BpfAsm.MAP_LOOKUP_ELEM);
        a.jump(Cond.EQ, R0, 0, "next");                                     // unknown sender: userspace counts it
        a.load(Size.W, R1, R0, 0).load(Size.W, R2, R0, 4);
        a.load(Size.W, R3, FP, -8).andReg(R3, R2).jumpReg(Cond.NE, R3, R1, "next"); // inner src in the sender's lease
        if (deliver == Deliver.GPE) {
            // only what a peer's encapsulating program sent (UDP checksum 0): an upstream peer's datagrams, and those
            // of our packet threads, stay with the socket as before
            a.load(Size.H, R1, FP, -22).jump(Cond.NE, R1, 0, "next");
            if (trial != null) { // one rewrite per TRIAL_GAP_NANOS; the rest to the socket
                a.call(BpfAsm.KTIME_GET_NS).movReg(R7, R0);
                a.storeImm(Size.W, FP, -56, 0).loadMap(R1, trial).movReg(R2, FP).add(R2, -56).call(BpfAsm.MAP_LOOKUP_ELEM);
                a.jump(Cond.EQ, R0, 0, "next");
                a.load(Size.DW, R1, R0, 0).add(R1, TRIAL_GAP_NANOS).jumpReg(Cond.GT, R1, R7, "next");
                a.store(Size.DW, R0, 0, R7);
            }
            toGpe(a, gpePort, gpeMark);
            count(a, counters, COUNT_DECAP);
            a.mov(R0, TCX_NEXT).exit();
            a.label("refused");
            count(a, counters, COUNT_REFUSED);
            a.mov(R0, TCX_DROP).exit();
            return verdicts(a, counters);
        }
        a.movReg(R1, R6).mov(R2, -UdpBackend.ENCAP_OVERHEAD).mov(R3, ADJ_ROOM_MAC).mov(R4, F_FIXED_GSO | F_DECAP_L4_UDP)
                .call(BpfAsm.SKB_ADJUST_ROOM);
        a.jump(Cond.EQ, R0, 0, "decapsulated").jump(Cond.NE, R0, -EINVAL, "next");
        a.movReg(R1, R6).mov(R2, -UdpBackend.ENCAP_OVERHEAD).mov(R3, ADJ_ROOM_MAC).mov(R4, F_FIXED_GSO)
                .call(BpfAsm.SKB_ADJUST_ROOM);
        a.jump(Cond.NE, R0, 0, "next");
        a.label("decapsulated");
        decrementTtl(a, ETH_HLEN, -12);
        count(a, counters, COUNT_DECAP);
        a.mov(R1, tunIfindex).mov(R2, F_INGRESS).call(BpfAsm.REDIRECT);
        a.exit();
        return verdicts(a, counters);
    }

    /** {@code jfl_udp_seen}'s value: four native-order u64 counters, in this order ({@link ProofEvidence}). */
    static final int SEEN_KERNEL_ANSWERS = 0;
    static final int SEEN_DAEMON_ANSWERS = 1;
    static final int SEEN_CHECKSUMMED_TCP = 2;
    static final int SEEN_OTHER_ANSWERS = 3;
    static final int SEEN_SLOTS = 4;
    /** {@code jfl_udp_proof}'s value: the u32 {@link #encap} reads (non-zero: proven), 4 bytes of padding, the u64 nonce. */
    static final int PROOF_VALUE = 16;
    static final int PROOF_NONCE_OFFSET = 8;
    /** What {@link KernelProbe} sends: an echo request of this identifier whose 8-byte payload is the nonce. */
    static final int PROBE_ECHO_ID = 0x6a66; // "jf"
    static final int PROBE_NONCE_BYTES = 8;

    /**
     * What a routed peer's datagrams show about its kernel, counted in its {@code seen} entry (the daemon makes the
     * entries and decides, {@link KernelProbe}; the program writes no proof): an echo reply of {@link #PROBE_ECHO_ID}
     * whose payload is the nonce in the peer's {@code proof} entry (non-zero) is an answer to our probe, which only
     * the peer saw: with UDP checksum 0 its kernel encapsulated it ({@link #SEEN_KERNEL_ANSWERS}), checksummed its
     * daemon did ({@link #SEEN_DAEMON_ANSWERS}); an echo reply of that identifier with another payload (a late answer to
     * an earlier probe, or a forgery: {@link #SEEN_OTHER_ANSWERS}); a checksummed TCP packet, which a peer's encapsulating
     * program would have taken ({@link #SEEN_CHECKSUMMED_TCP}: a reason to probe, never a verdict, as anyone can send
     * one with the peer's address). Outer IPv4 and UDP checked by the caller, inner IPv4 without options.
     *
     * <p>Stack: -36 the outer source (the key); -88 the inner ICMP header and the 8 bytes after it.
     */
    private static void seen(BpfAsm a, BpfMap proof, BpfMap seen) {
        a.loadMap(R1, seen).movReg(R2, FP).add(R2, -36).call(BpfAsm.MAP_LOOKUP_ELEM);
        a.jump(Cond.EQ, R0, 0, "seenDone");
        a.movReg(R7, R0);
        a.load(Size.B, R1, FP, -11).jump(Cond.EQ, R1, IPPROTO_TCP, "seenTcp").jump(Cond.NE, R1, IPPROTO_ICMP, "seenDone");
        a.movReg(R1, R6).mov(R2, ETH_HLEN + 48).movReg(R3, FP).add(R3, -88).mov(R4, 8 + PROBE_NONCE_BYTES)
                .call(BpfAsm.SKB_LOAD_BYTES);
        a.jump(Cond.NE, R0, 0, "seenDone");
        a.load(Size.H, R1, FP, -88).jump(Cond.NE, R1, 0, "seenDone");    // type 0 (echo reply), code 0
        a.load(Size.H, R1, FP, -84).jump(Cond.NE, R1, be16(PROBE_ECHO_ID), "seenDone");
        a.loadMap(R1, proof).movReg(R2, FP).add(R2, -36).call(BpfAsm.MAP_LOOKUP_ELEM);
        a.jump(Cond.EQ, R0, 0, "seenDone");
        a.load(Size.DW, R1, R0, PROOF_NONCE_OFFSET).jump(Cond.EQ, R1, 0, "seenOther"); // no probe out yet
        a.load(Size.DW, R2, FP, -80).jumpReg(Cond.NE, R1, R2, "seenOther");
        a.mov(R1, 1);
        a.load(Size.H, R2, FP, -22).jump(Cond.NE, R2, 0, "seenDaemon");
        a.atomicAdd64(R7, 8 * SEEN_KERNEL_ANSWERS, R1).jump("seenDone");
        a.label("seenDaemon").atomicAdd64(R7, 8 * SEEN_DAEMON_ANSWERS, R1).jump("seenDone");
        a.label("seenOther").mov(R1, 1).atomicAdd64(R7, 8 * SEEN_OTHER_ANSWERS, R1).jump("seenDone");
        a.label("seenTcp");
        a.load(Size.H, R1, FP, -22).jump(Cond.EQ, R1, 0, "seenDone");
        a.mov(R1, 1).atomicAdd64(R7, 8 * SEEN_CHECKSUMMED_TCP, R1);
        a.label("seenDone");
    }

    /**
     * The accepted datagram (outer IPv4 at -48, UDP at -28, inner IPv4 at -20 on the stack) becomes a VXLAN-GPE
     * datagram: 8 bytes of room right after the Ethernet header ({@code bpf_skb_adjust_room} at the MAC layer
     * with a fixed GSO size, which a TCP super-packet allows; the inner packet keeps its place, so the skb's
     * inner header offsets stay right), the outer IPv4 + UDP header written again at the front (lengths + 8,
     * destination port the GPE port, UDP checksum 0, IPv4 checksum recomputed), then the GPE header (I and P
     * flags, next protocol IPv4, VNI 0), the inner TTL decremented, the skb marked for {@link #gpeGate}.
     */
    private static void toGpe(BpfAsm a, int gpePort, int gpeMark) {
        a.movReg(R1, R6).mov(R2, GPE_HLEN).mov(R3, ADJ_ROOM_MAC).mov(R4, F_FIXED_GSO).call(BpfAsm.SKB_ADJUST_ROOM);
        a.jump(Cond.NE, R0, 0, "next");                                     // untouched: the socket takes it
        a.load(Size.H, R1, FP, -46).toBe16(R1).add(R1, GPE_HLEN).toBe16(R1).store(Size.H, FP, -46, R1);
        a.storeImm(Size.H, FP, -38, 0);
        a.mov(R1, 0).mov(R2, 0).movReg(R3, FP).add(R3, -48).mov(R4, 20).mov(R5, 0).call(BpfAsm.CSUM_DIFF);
        fold(a);
        a.store(Size.H, FP, -38, R0);
        a.mov(R1, be16(gpePort)).store(Size.H, FP, -26, R1);
        a.load(Size.H, R1, FP, -24).toBe16(R1).add(R1, GPE_HLEN).toBe16(R1).store(Size.H, FP, -24, R1);
        a.storeImm(Size.H, FP, -22, 0);
        a.storeImm(Size.W, FP, -20, GPE_FLAGS_IPV4).storeImm(Size.W, FP, -16, 0);
        storeBytes(a, ETH_HLEN, -48, UdpBackend.ENCAP_OVERHEAD + GPE_HLEN, F_RECOMPUTE_CSUM);
        decrementTtl(a, ETH_HLEN + UdpBackend.ENCAP_OVERHEAD + GPE_HLEN, -12);
        a.mov(R1, gpeMark).store(Size.W, R6, SKB_MARK, R1);
    }

    /**
     * The GPE device's ingress: a packet the kernel's VXLAN-GPE receive path decapsulated enters flannel0's receive
     * path (as {@link #decap}'s redirect does, so routing and reverse-path filtering see flannel0, whose routes cover
     * the peers' subnets) only when it carries {@code mark}, which {@link #decap} gives the datagrams it rewrote;
     * anything else reaching the GPE port (a local process, a pod) is dropped and counted ({@link #COUNT_REFUSED}).
     * The mark is cleared.
     */
    static byte[] gpeGate(BpfMap counters, int mark, int tunIfindex) {
        BpfAsm a = new BpfAsm();
        a.movReg(R6, R1);
        a.load(Size.W, R1, R6, SKB_MARK).jump32(Cond.NE, R1, mark, "drop");
        a.mov(R1, 0).store(Size.W, R6, SKB_MARK, R1);
        count(a, counters, COUNT_GATE);
        a.mov(R1, tunIfindex).mov(R2, F_INGRESS).call(BpfAsm.REDIRECT);
        a.exit();
        a.label("drop");
        count(a, counters, COUNT_REFUSED);
        a.mov(R0, TCX_DROP).exit();
        return a.build();
    }

    private static int be16(int v) {
        return Short.toUnsignedInt(Short.reverseBytes((short) v));
    }

    /** {@code bpf_skb_load_bytes(skb, from, fp + to, len)}, to "next" on failure (a short packet). */
    private static void loadBytes(BpfAsm a, int from, int to, int len) {
        a.movReg(R1, R6).mov(R2, from).movReg(R3, FP).add(R3, to).mov(R4, len).call(BpfAsm.SKB_LOAD_BYTES);
        a.jump(Cond.NE, R0, 0, "next");
    }

    /** {@code bpf_skb_store_bytes(skb, to, fp + from, len, 0)}, to "failed" on failure. */
    private static void storeBytes(BpfAsm a, int to, int from, int len) {
        storeBytes(a, to, from, len, 0);
    }

    private static void storeBytes(BpfAsm a, int to, int from, int len, int flags) {
        a.movReg(R1, R6).mov(R2, to).movReg(R3, FP).add(R3, from).mov(R4, len).mov(R5, flags).call(BpfAsm.SKB_STORE_BYTES);
        a.jump(Cond.NE, R0, 0, "failed");
    }

    /**
     * TTL − 1 in the packet's IPv4 header at {@code ip}, whose copy is on the stack with its TTL
     * byte at {@code stackTtl}; the header checksum is patched over the TTL/protocol word (RFC 1624).
     * The caller has checked TTL ≥ 2, so the low byte does not borrow.
     */
    private static void decrementTtl(BpfAsm a, int ip, int stackTtl) {
        a.load(Size.H, R9, FP, stackTtl).movReg(R8, R9).add(R8, -1).store(Size.B, FP, stackTtl, R8);
        storeBytes(a, ip + 8, stackTtl, 1);
        a.movReg(R1, R6).mov(R2, ip + 10).movReg(R3, R9).movReg(R4, R8).mov(R5, 2).call(BpfAsm.L3_CSUM_REPLACE);
        a.jump(Cond.NE, R0, 0, "failed");
    }

    /** Folds the 32-bit sum in R0 to the 16-bit one's-complement checksum. */
    private static void fold(BpfAsm a) {
        a.movReg(R1, R0).rsh(R1, 16).and(R0, 0xffff).addReg(R0, R1);
        a.movReg(R1, R0).rsh(R1, 16).addReg(R0, R1).xor(R0, 0xffff).and(R0, 0xffff);
    }

    /** counters[slot] += 1 (atomically). Uses the stack word at -64. */
    private static void count(BpfAsm a, BpfMap counters, int slot) {
        String skip = "uncounted" + slot;
        a.storeImm(Size.W, FP, -64, slot).loadMap(R1, counters).movReg(R2, FP).add(R2, -64).call(BpfAsm.MAP_LOOKUP_ELEM);
        a.jump(Cond.EQ, R0, 0, skip).mov(R1, 1).atomicAdd64(R0, 0, R1).label(skip);
    }

    /** The shared tails: "next" (leave the packet to the userspace path) and "failed" (half-rewritten: drop). */
    private static byte[] verdicts(BpfAsm a, BpfMap counters) {
        a.label("next").mov(R0, TCX_NEXT).exit();
        a.label("failed");
        count(a, counters, COUNT_FAILED);
        a.mov(R0, TCX_DROP).exit();
        return a.build();
    }
}
