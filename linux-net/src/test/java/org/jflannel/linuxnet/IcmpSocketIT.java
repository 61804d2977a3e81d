package org.jflannel.linuxnet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.Optional;
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
}
