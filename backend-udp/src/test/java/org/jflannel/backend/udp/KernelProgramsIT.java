package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.jflannel.core.Ip4Net;
import org.jflannel.linuxnet.bpf.BpfMap;
import org.jflannel.linuxnet.bpf.BpfProgram;
import org.jflannel.packet.Packets;
import org.jflannel.testbase.NetnsPrivilege;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The decapsulating program run by the kernel on hand-built frames (bpf(2) BPF_PROG_TEST_RUN, so
 * the verifier and the helpers are the kernel's): a datagram it may take comes out as the inner
 * packet, TTL one less and its header checksum still right (checked here from scratch); each
 * datagram it must leave to the packet threads comes out untouched with TCX_NEXT. Root only (bpf(2)),
 * hence the netns tag, though no namespace is made.
 */
@Tag("netns")
class KernelProgramsIT {
    private static final int TC_ACT_REDIRECT = 7;
    private static final String NODE = "192.0.2.1";
    private static final String PEER = "192.0.2.2";

    private BpfMap sources;
    private BpfMap own;
    private BpfMap counters;
    private BpfMap proof;
    private BpfMap seen;
    private BpfProgram decap;

    @BeforeEach
    void load() throws Exception {
        NetnsPrivilege.require();
        sources = BpfMap.create(BpfMap.Type.HASH, "jfl_t_sources", 4, 8, 16);
        own = BpfMap.create(BpfMap.Type.ARRAY, "jfl_t_own", 4, 8, 1);
        counters = BpfMap.create(BpfMap.Type.ARRAY, "jfl_t_counts", 4, 8, KernelPath.COUNTERS);
        proof = BpfMap.create(BpfMap.Type.HASH, "jfl_t_proof", 4, KernelPrograms.PROOF_VALUE, 16);
        seen = BpfMap.create(BpfMap.Type.HASH, "jfl_t_seen", 4, ProofEvidence.VALUE_BYTES, 16);
        sources.put(be(Ip4Net.parseAddress(PEER)), be(Ip4Net.parseAddress("10.244.2.0"), Ip4Net.mask(24)));
        own.put(index(0), be(Ip4Net.parseAddress("10.244.1.0"), Ip4Net.mask(24)));
        decap = BpfProgram.loadClassifier("jfl_t_decap",
                KernelPrograms.decap(sources, own, proof, seen, counters, Ip4Net.parseAddress(NODE), 8285, 1));
    }

    @AfterEach
    void close() {
        for (AutoCloseable c : new AutoCloseable[] {decap, seen, proof, counters, own, sources}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // best effort
            }
        }
    }

    @Test
    void aDatagramFromAKnownPeerComesOutAsItsInnerPacketOneHopOlder() throws Exception {
        ByteBuffer inner = Packets.ipv4("10.244.2.7", "10.244.1.9", 6, 63, 1200);
        byte[] frame = frame(PEER, NODE, 8285, inner, f -> { });

        BpfProgram.TestRun r = decap.testRun(frame);

        assertThat(r.verdict()).as("redirected into flannel0").isEqualTo(TC_ACT_REDIRECT);
        assertThat(r.packet()).hasSize(frame.length - UdpBackend.ENCAP_OVERHEAD);
        assertThat(Arrays.copyOfRange(r.packet(), 0, 14)).as("link-layer header kept").isEqualTo(Arrays.copyOfRange(frame, 0, 14));
        ByteBuffer out = ByteBuffer.wrap(Arrays.copyOfRange(r.packet(), 14, r.packet().length));
        assertThat(out.get(8) & 0xff).as("TTL").isEqualTo(62);
        assertThat(Packets.onesSum(Arrays.copyOfRange(out.array(), 0, 20))).as("header checksum after the TTL change")
                .isEqualTo(0xffff);
        out.put(8, (byte) 63).putShort(10, inner.getShort(10));
        assertThat(out.array()).as("otherwise the inner packet as sent").isEqualTo(bytes(inner));
        assertThat(count(KernelPrograms.COUNT_DECAP)).isEqualTo(1);
    }

    /**
     * A routed peer's datagrams decide nothing in the program: it counts what they show in the peer's seen entry and
     * never writes the proof. An echo reply carrying the nonce in the proof entry counts as the peer's kernel's answer
     * with UDP checksum 0 and as its daemon's when checksummed; another payload (a guess, a late answer) and a reply
     * before any probe (nonce 0) as other answers; a checksummed TCP packet as a reason to probe; a TCP packet with UDP
     * checksum 0 and a checksummed ICMP that is no echo reply as nothing. Each is still decapsulated (it came from the
     * peer, as far as anyone can tell).
     */
    @Test
    void aRoutedPeersDatagramsAreCountedAndNeverWriteItsProof() throws Exception {
        long nonce = 0x0123_4567_89ab_cdefL;
        byte[] unset = KernelPath.proofValue(false, 0);
        proof.put(be(Ip4Net.parseAddress(PEER)), unset);
        seen.put(be(Ip4Net.parseAddress(PEER)), new byte[ProofEvidence.VALUE_BYTES]);
        ByteBuffer tcp = Packets.ipv4("10.244.2.7", "10.244.1.9", 6, 63, 100);

        decap.testRun(frame(PEER, NODE, 8285, echoReply(nonce), noop()));
        assertThat(evidence()).as("an answer before any probe").isEqualTo(new ProofEvidence(0, 0, 0, 1));
        byte[] probed = KernelPath.proofValue(false, nonce);
        proof.put(be(Ip4Net.parseAddress(PEER)), probed);
        BpfProgram.TestRun r = decap.testRun(frame(PEER, NODE, 8285, echoReply(nonce), noop()));
        assertThat(r.verdict()).as("the answer decapsulated").isEqualTo(TC_ACT_REDIRECT);
        assertThat(evidence()).as("the answer with UDP checksum 0").isEqualTo(new ProofEvidence(1, 0, 0, 1));
        decap.testRun(frame(PEER, NODE, 8285, echoReply(nonce), checksummed()));
        assertThat(evidence()).as("the answer checksummed").isEqualTo(new ProofEvidence(1, 1, 0, 1));
        decap.testRun(frame(PEER, NODE, 8285, echoReply(nonce ^ 1), noop()));
        decap.testRun(frame(PEER, NODE, 8285, echoReply(~nonce), checksummed()));
        assertThat(evidence()).as("two replies with another payload").isEqualTo(new ProofEvidence(1, 1, 0, 3));
        decap.testRun(frame(PEER, NODE, 8285, tcp, noop()));
        decap.testRun(frame(PEER, NODE, 8285, Packets.ipv4("10.244.2.7", "10.244.1.9", 1, 63, 100), checksummed()));
        assertThat(evidence()).as("TCP with UDP checksum 0, checksummed ICMP that is no reply of ours")
                .isEqualTo(new ProofEvidence(1, 1, 0, 3));
        r = decap.testRun(frame(PEER, NODE, 8285, tcp, checksummed()));
        assertThat(r.verdict()).as("still decapsulated: it came from the peer").isEqualTo(TC_ACT_REDIRECT);
        assertThat(evidence()).as("a checksummed TCP packet").isEqualTo(new ProofEvidence(1, 1, 1, 3));
        assertThat(proof.get(be(Ip4Net.parseAddress(PEER))).orElseThrow()).as("the proof as the daemon wrote it").isEqualTo(probed);
        assertThat(proven()).isFalse();
    }

    /** An echo reply of the probe's identifier whose 8-byte payload is {@code nonce} (big-endian, as the probe sends it). */
    private static ByteBuffer echoReply(long nonce) {
        ByteBuffer p = Packets.ipv4("10.244.2.0", "10.244.1.0", 1, 64, 16);
        p.put(20, (byte) 0).put(21, (byte) 0).putShort(24, (short) KernelPrograms.PROBE_ECHO_ID).putShort(26, (short) 1)
                .putLong(28, nonce);
        return p;
    }

    private ProofEvidence evidence() throws Exception {
        return ProofEvidence.of(seen.get(be(Ip4Net.parseAddress(PEER))).orElseThrow());
    }

    /**
     * Encapsulation only ({@code JFLANNEL_UDP_KERNEL=encap}, and gpe's fallback): the program counts what the peers'
     * datagrams show as the full one does, and leaves every datagram, untouched, to the socket.
     */
    @Test
    void theEncapOnlyProgramCountsProofEvidenceAndLeavesEveryDatagramToTheSocket() throws Exception {
        try (BpfProgram proofOnly = BpfProgram.loadClassifier("jfl_t_decap_e",
                KernelPrograms.decap(sources, own, proof, seen, counters, Ip4Net.parseAddress(NODE), 8285, 1, false))) {
            proof.put(be(Ip4Net.parseAddress(PEER)), KernelPath.proofValue(true, 42));
            seen.put(be(Ip4Net.parseAddress(PEER)), new byte[ProofEvidence.VALUE_BYTES]);
            byte[] frame = frame(PEER, NODE, 8285, echoReply(42), noop());

            BpfProgram.TestRun r = proofOnly.testRun(frame);

            assertThat(r.verdict()).as("TCX_NEXT: on to the socket").isEqualTo(KernelPrograms.TCX_NEXT);
            assertThat(r.packet()).as("untouched").isEqualTo(frame);
            ByteBuffer tcp = Packets.ipv4("10.244.2.7", "10.244.1.9", 6, 63, 1200);
            assertThat(proofOnly.testRun(frame(PEER, NODE, 8285, tcp, checksummed())).verdict()).isEqualTo(KernelPrograms.TCX_NEXT);
            assertThat(evidence()).isEqualTo(new ProofEvidence(1, 0, 1, 0));
            assertThat(proven()).as("as the daemon wrote it").isTrue();
            assertThat(count(KernelPrograms.COUNT_DECAP)).as("nothing decapsulated").isZero();
        }
    }

    /**
     * {@code JFLANNEL_UDP_KERNEL=gpe}: a peer kernel's datagram comes out as a VXLAN-GPE datagram to the GPE port,
     * eight bytes longer, its outer headers right (lengths, checksum), the inner packet one hop older and otherwise as
     * sent; a checksummed one (an upstream peer's, or our packet threads') goes on untouched; one addressed to the GPE
     * port is dropped and counted.
     */
    @Test
    void theGpeProgramRewritesAPeerKernelsDatagramIntoVxlanGpeAndRefusesTheGpePort() throws Exception {
        try (BpfProgram gpe = BpfProgram.loadClassifier("jfl_t_decap_g", KernelPrograms.decap(sources, own, proof, seen, counters,
                Ip4Net.parseAddress(NODE), 8285, 1, KernelPrograms.Deliver.GPE, 4790, 0x5a5a5a5a));
                BpfProgram gate = BpfProgram.loadClassifier("jfl_t_gate", KernelPrograms.gpeGate(counters, 0x5a5a5a5a, 1))) {
            ByteBuffer inner = Packets.ipv4("10.244.2.7", "10.244.1.9", 6, 63, 1200);
            byte[] frame = frame(PEER, NODE, 8285, inner, noop());

            BpfProgram.TestRun r = gpe.testRun(frame);

            assertThat(r.verdict()).as("TCX_NEXT: up the stack to the GPE device's socket").isEqualTo(KernelPrograms.TCX_NEXT);
            byte[] out = r.packet();
            assertThat(out).hasSize(frame.length + KernelPrograms.GPE_HLEN);
            assertThat(Arrays.copyOfRange(out, 0, 14)).as("link-layer header kept").isEqualTo(Arrays.copyOfRange(frame, 0, 14));
            ByteBuffer o = ByteBuffer.wrap(out);
            assertThat(Packets.onesSum(Arrays.copyOfRange(out, 14, 34))).as("outer header checksum").isEqualTo(0xffff);
            assertThat(o.getShort(14 + 2) & 0xffff).as("outer total length").isEqualTo(frame.length - 14 + 8);
            assertThat(Arrays.copyOfRange(out, 14 + 12, 14 + 20)).as("outer addresses")
                    .isEqualTo(Arrays.copyOfRange(frame, 14 + 12, 14 + 20));
            assertThat(o.getShort(34) & 0xffff).as("source port").isEqualTo(8285);
            assertThat(o.getShort(36) & 0xffff).as("destination port: the GPE device's").isEqualTo(4790);
            assertThat(o.getShort(38) & 0xffff).as("UDP length").isEqualTo(frame.length - 34 + 8);
            assertThat(o.getShort(40)).as("UDP checksum").isZero();
            assertThat(Arrays.copyOfRange(out, 42, 50)).as("VXLAN-GPE header: I and P flags, next protocol IPv4, VNI 0")
                    .isEqualTo(new byte[] {0x0c, 0, 0, 1, 0, 0, 0, 0});
            ByteBuffer in = ByteBuffer.wrap(Arrays.copyOfRange(out, 50, out.length));
            assertThat(in.get(8) & 0xff).as("inner TTL").isEqualTo(62);
            assertThat(Packets.onesSum(Arrays.copyOfRange(in.array(), 0, 20))).as("inner header checksum").isEqualTo(0xffff);
            in.put(8, (byte) 63).putShort(10, inner.getShort(10));
            assertThat(in.array()).as("otherwise the inner packet as sent").isEqualTo(bytes(inner));
            assertThat(count(KernelPrograms.COUNT_DECAP)).isEqualTo(1);

            byte[] upstream = frame(PEER, NODE, 8285, inner, checksummed());
            BpfProgram.TestRun u = gpe.testRun(upstream);
            assertThat(u.verdict()).as("a checksummed datagram: on to the socket").isEqualTo(KernelPrograms.TCX_NEXT);
            assertThat(u.packet()).as("untouched").isEqualTo(upstream);

            BpfProgram.TestRun refused = gpe.testRun(frame(PEER, NODE, 4790, inner, noop()));
            assertThat(refused.verdict()).as("to the GPE port from outside: dropped").isEqualTo(KernelPrograms.TCX_DROP);
            assertThat(count(KernelPrograms.COUNT_REFUSED)).isEqualTo(1);
            assertThat(count(KernelPrograms.COUNT_DECAP)).isEqualTo(1);
            byte[] elsewhere = frame(PEER, "10.244.1.9", 4790, inner, noop());
            BpfProgram.TestRun passing = gpe.testRun(elsewhere);
            assertThat(passing.verdict()).as("port 4790 to another address (routed through): not ours to refuse")
                    .isEqualTo(KernelPrograms.TCX_NEXT);
            assertThat(passing.packet()).isEqualTo(elsewhere);
            assertThat(count(KernelPrograms.COUNT_REFUSED)).isEqualTo(1);

            // the gate, unmarked (the test run's skb has mark 0): dropped and counted
            assertThat(gate.testRun(Arrays.copyOfRange(out, 0, out.length)).verdict()).isEqualTo(KernelPrograms.TCX_DROP);
            assertThat(count(KernelPrograms.COUNT_REFUSED)).isEqualTo(2);
            assertThat(count(KernelPrograms.COUNT_GATE)).as("nothing passed the gate").isZero();
        }
    }

    /**
     * The trial program (a GPE path on trial, {@link GpePath#check}): of two datagrams back to back it rewrites
     * the first and leaves the second to the socket untouched, so a path that does not deliver costs a datagram a second.
     */
    @Test
    void theTrialProgramRewritesAtMostOneDatagramASecond() throws Exception {
        try (BpfMap trial = BpfMap.create(BpfMap.Type.ARRAY, "jfl_t_trial", 4, 8, 1);
                BpfProgram gpe = BpfProgram.loadClassifier("jfl_t_decap_t", KernelPrograms.decap(sources, own, proof, seen, counters,
                        Ip4Net.parseAddress(NODE), 8285, 1, KernelPrograms.Deliver.GPE, 4790, 0x5a5a5a5a, trial))) {
            byte[] frame = frame(PEER, NODE, 8285, Packets.ipv4("10.244.2.7", "10.244.1.9", 6, 63, 1200), noop());

            BpfProgram.TestRun first = gpe.testRun(frame);
            BpfProgram.TestRun second = gpe.testRun(frame);

            assertThat(first.packet()).as("the first: rewritten").hasSize(frame.length + KernelPrograms.GPE_HLEN);
            assertThat(second.verdict()).isEqualTo(KernelPrograms.TCX_NEXT);
            assertThat(second.packet()).as("the second, within the second: to the socket, untouched").isEqualTo(frame);
            assertThat(count(KernelPrograms.COUNT_DECAP)).isEqualTo(1);
        }
    }

    @Test
    void aPeerWithoutEntriesGetsNone() throws Exception {
        decap.testRun(frame(PEER, NODE, 8285, Packets.ipv4("10.244.2.7", "10.244.1.9", 6, 63, 100), checksummed()));
        decap.testRun(frame(PEER, NODE, 8285, echoReply(7), noop()));

        assertThat(proof.get(be(Ip4Net.parseAddress(PEER)))).as("only the daemon creates entries, for routed peers").isEmpty();
        assertThat(seen.get(be(Ip4Net.parseAddress(PEER)))).isEmpty();
    }

    private boolean proven() throws Exception {
        return KernelPath.provenValue(proof.get(be(Ip4Net.parseAddress(PEER))).orElseThrow());
    }

    private static Consumer<ByteBuffer> checksummed() {
        return f -> f.putShort(14 + 20 + 6, (short) 0x1234);
    }

    static Stream<Arguments> leftToThePacketThreads() {
        return Stream.of(
                Arguments.of("unknown sender", "192.0.2.9", NODE, 8285, Packets.ipv4("10.244.2.7", "10.244.1.9", 6, 63, 100), noop()),
                Arguments.of("inner source outside the sender's lease", PEER, NODE, 8285,
                        Packets.ipv4("10.244.3.7", "10.244.1.9", 6, 63, 100), noop()),
                Arguments.of("inner destination outside our lease", PEER, NODE, 8285,
                        Packets.ipv4("10.244.2.7", "10.244.5.9", 6, 63, 100), noop()),
                Arguments.of("another port", PEER, NODE, 8472, Packets.ipv4("10.244.2.7", "10.244.1.9", 6, 63, 100), noop()),
                Arguments.of("another destination", PEER, "192.0.2.3", 8285,
                        Packets.ipv4("10.244.2.7", "10.244.1.9", 6, 63, 100), noop()),
                Arguments.of("inner TTL 1", PEER, NODE, 8285, Packets.ipv4("10.244.2.7", "10.244.1.9", 6, 1, 100), noop()),
                Arguments.of("outer fragment", PEER, NODE, 8285, Packets.ipv4("10.244.2.7", "10.244.1.9", 6, 63, 100),
                        (Consumer<ByteBuffer>) f -> f.putShort(14 + 6, (short) 0x2000)),
                Arguments.of("two packets in one datagram (a GRO train's shape)", PEER, NODE, 8285,
                        twice(Packets.ipv4("10.244.2.7", "10.244.1.9", 6, 63, 100)), noop()),
                Arguments.of("outer IP options", PEER, NODE, 8285, Packets.ipv4("10.244.2.7", "10.244.1.9", 6, 63, 100),
                        (Consumer<ByteBuffer>) f -> f.put(14, (byte) 0x46)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void leftToThePacketThreads(String why, String src, String dst, int port, ByteBuffer inner, Consumer<ByteBuffer> edit)
            throws Exception {
        byte[] frame = frame(src, dst, port, inner, edit);

        BpfProgram.TestRun r = decap.testRun(frame);

        assertThat(r.verdict()).as("TCX_NEXT").isEqualTo(KernelPrograms.TCX_NEXT);
        assertThat(r.packet()).as("untouched").isEqualTo(frame);
        assertThat(count(KernelPrograms.COUNT_DECAP)).isZero();
    }

    private static Consumer<ByteBuffer> noop() {
        return f -> { };
    }

    private static ByteBuffer twice(ByteBuffer p) {
        byte[] one = bytes(p);
        return ByteBuffer.allocate(one.length * 2).put(one).put(one).flip();
    }

    /** Ethernet + outer IPv4 + UDP (checksum 0) around {@code inner}, then {@code edit} on the whole frame. */
    private static byte[] frame(String src, String dst, int port, ByteBuffer inner, Consumer<ByteBuffer> edit) {
        byte[] in = bytes(inner);
        ByteBuffer f = ByteBuffer.allocate(14 + 28 + in.length);
        f.put(new byte[] {2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2}).putShort((short) 0x0800);
        ByteBuffer ip = Packets.ipv4(src, dst, 17, 64, 8 + in.length);
        ip.putShort(6, (short) 0x4000);
        Packets.sealHeader(ip);
        byte[] outer = new byte[20];
        ip.get(0, outer);
        f.put(outer);
        f.putShort((short) 8285).putShort((short) port).putShort((short) (8 + in.length)).putShort((short) 0);
        f.put(in);
        edit.accept(f);
        return f.array();
    }

    private static byte[] bytes(ByteBuffer p) {
        byte[] b = new byte[p.limit()];
        p.get(0, b);
        return b;
    }

    private long count(int slot) throws Exception {
        return ByteBuffer.wrap(counters.get(index(slot)).orElseThrow()).order(ByteOrder.nativeOrder()).getLong();
    }

    private static byte[] index(int i) {
        return ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(i).array();
    }

    private static byte[] be(int... words) {
        ByteBuffer b = ByteBuffer.allocate(4 * words.length);
        for (int w : words) {
            b.putInt(w);
        }
        return b.array();
    }
}
