package org.jflannel.linuxnet.socket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.Optional;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.TestNs;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Echo probes on the raw socket in a throwaway namespace: answered on a local address, refused above the MTU. */
@Tag("netns")
class IcmpSocketIT {

    @Test
    void echoToALocalAddressIsAnsweredWithOurIdAndSeq() throws Exception {
        try (TestNs t = TestNs.create("icmp")) {
            Optional<IcmpMessage> reply = t.ns.call(() -> {
                try (RtNetlink nl = RtNetlink.open(); IcmpSocket s = IcmpSocket.open()) {
                    nl.setUp(nl.link("lo").orElseThrow().index());
                    s.sendEcho((Inet4Address) InetAddress.getByName("127.0.0.1"), 0x4242, 7, 1000);
                    for (int i = 0; i < 10; i++) {   // bounded: 10 x 500 ms
                        Optional<IcmpMessage> m = s.receive(500);
                        if (m.isPresent() && m.get().id() == 0x4242) {
                            return m;
                        }
                    }
                    return Optional.<IcmpMessage>empty();
                }
            });
            assertThat(reply).as("echo reply from 127.0.0.1").isPresent();
            assertThat(reply.get().kind()).isEqualTo(IcmpMessage.Kind.ECHO_REPLY);
            assertThat(reply.get().seq()).isEqualTo(7);
            assertThat(t.ns.call(() -> {
                try (IcmpSocket s = IcmpSocket.open()) {
                    return s.receive(50);
                }
            })).as("nothing to read: empty after the timeout").isEmpty();
        }
    }

    /**
     * An echo with a payload of ours (odd length: the last byte is a word's high half): the kernel checks the
     * checksum before it answers, so a reply proves the sum right; an echo of the pattern sent next is answered
     * too (the payload did not stay in the buffer under the pattern's cached sums).
     */
    @Test
    void echoWithAPayloadOfOursIsAnsweredAndThePatternSendsStayRight() throws Exception {
        try (TestNs t = TestNs.create("icmp")) {
            boolean[] answered = t.ns.call(() -> {
                try (RtNetlink nl = RtNetlink.open(); IcmpSocket s = IcmpSocket.open()) {
                    nl.setUp(nl.link("lo").orElseThrow().index());
                    int lo = IcmpSocket.address((Inet4Address) InetAddress.getByName("127.0.0.1"));
                    s.sendEcho(lo, 0x4444, 1, new byte[] {(byte) 0xfe, 0x01, (byte) 0x99, 0x7f, 0, (byte) 0xff, 0x10, 0x20, 0x31});
                    s.sendEcho(lo, 0x4444, 2, 100);
                    boolean[] seen = new boolean[3];
                    for (int i = 0; i < 20 && !(seen[1] && seen[2]); i++) {   // bounded: 20 x 500 ms
                        Optional<IcmpMessage> m = s.receive(500);
                        if (m.isPresent() && m.get().id() == 0x4444 && m.get().seq() <= 2) {
                            seen[m.get().seq()] = true;
                        }
                    }
                    return seen;
                }
            });
            assertThat(answered[1]).as("the echo carrying our payload answered").isTrue();
            assertThat(answered[2]).as("the pattern echo after it answered").isTrue();
        }
    }

    @Test
    void probeLargerThanTheDeviceMtuFailsWithEmsgsizeBecauseDfIsSet() throws Exception {
        try (TestNs t = TestNs.create("icmp")) {
            t.ns.run(() -> {
                try (RtNetlink nl = RtNetlink.open(); IcmpSocket s = IcmpSocket.open()) {
                    nl.createVeth("icva", "icvb"); // no dummy module on every kernel
                    int i = nl.link("icva").orElseThrow().index();
                    nl.setMtu(i, 1280);
                    nl.addAddress(i, IpPrefix.parse("10.98.0.1/24"));
                    nl.setUp(i);
                    Inet4Address peer = (Inet4Address) InetAddress.getByName("10.98.0.2");
                    s.sendEcho(peer, 1, 1, 1280); // fits: leaves (and nobody answers)
                    assertThatThrownBy(() -> s.sendEcho(peer, 1, 2, 1281))
                            .isInstanceOfSatisfying(NetlinkException.class,
                                    e -> assertThat(e.errno()).isEqualTo(IcmpSocket.EMSGSIZE));
                }
            });
        }
    }

    @Test
    void batchOfEchoesIsSentInOneGoAndTheRepliesComeBackTimestamped() throws Exception {
        try (TestNs t = TestNs.create("icmp")) {
            IcmpBatch got = t.ns.call(() -> {
                try (RtNetlink nl = RtNetlink.open(); IcmpSocket s = IcmpSocket.open()) {
                    nl.setUp(nl.link("lo").orElseThrow().index());
                    int lo = IcmpSocket.address((Inet4Address) InetAddress.getByName("127.0.0.1"));
                    IcmpEchoBatch out = new IcmpEchoBatch(4);
                    out.add(lo, 0x4343, 100, 84);
                    out.add(lo, 0x4343, 101, 1400);
                    s.send(out);
                    assertThat(out.errno(0)).isZero();
                    assertThat(out.errno(1)).isZero();
                    IcmpBatch in = new IcmpBatch(8);
                    for (int i = 0; i < 10 && s.awaitReadable(500); i++) { // bounded: 10 x 500 ms
                        int n = s.receive(in);
                        if (n == 2) {
                            return in;
                        }
                    }
                    return null;
                }
            });
            assertThat(got).as("both replies in one receive").isNotNull();
            long now = System.currentTimeMillis() * 1_000_000L;
            for (int i = 0; i < 2; i++) {
                assertThat(got.kind(i)).isEqualTo(IcmpMessage.Kind.ECHO_REPLY);
                assertThat(got.id(i)).isEqualTo(0x4343);
                assertThat(got.seq(i)).isIn(100, 101);
                assertThat(got.target(i)).isEqualTo(0x7f000001);
                assertThat(got.kernelTimestampNanos(i)).as("SO_TIMESTAMPNS, wall clock")
                        .isBetween(now - 60_000_000_000L, now + 1_000_000_000L);
            }
            assertThat(t.ns.call(() -> {
                try (IcmpSocket s = IcmpSocket.open()) {
                    return s.receive(new IcmpBatch(2));
                }
            })).as("nothing queued: 0, no wait").isZero();
        }
    }

    @Test
    void batchSendGoesOnPastARefusedProbeAndSaysWhichOneFailed() throws Exception {
        try (TestNs t = TestNs.create("icmp")) {
            int[] errnos = t.ns.call(() -> {
                try (RtNetlink nl = RtNetlink.open(); IcmpSocket s = IcmpSocket.open()) {
                    nl.createVeth("icba", "icbb");
                    int i = nl.link("icba").orElseThrow().index();
                    nl.setMtu(i, 1280);
                    nl.addAddress(i, IpPrefix.parse("10.98.1.1/24"));
                    nl.setUp(i);
                    int peer = IcmpSocket.address((Inet4Address) InetAddress.getByName("10.98.1.2"));
                    IcmpEchoBatch out = new IcmpEchoBatch(4);
                    out.add(peer, 1, 1, 1280);
                    out.add(peer, 1, 2, 1281); // above the MTU with DF: refused
                    out.add(peer, 1, 3, 84);
                    s.send(out);
                    return new int[] {out.errno(0), out.errno(1), out.errno(2)};
                }
            });
            assertThat(errnos).containsExactly(0, IcmpSocket.EMSGSIZE, 0);
        }
    }
}
