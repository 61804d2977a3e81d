package org.jflannel.linuxnet.tun;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.jflannel.linuxnet.TestNs;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.linuxnet.sys.Sysctl;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** A ping routed into a TUN is read from it, and the echo reply we write back reaches the pinger. */
@Tag("netns")
class TunIT {

    @Test
    void pingIntoTunIsAnsweredThroughTheTun() throws Exception {
        try (TestNs t = TestNs.create("tun")) {
            TunDevice tun = t.ns.call(() -> {
                TunDevice d = TunDevice.open("jtun%d", EnumSet.of(TunDevice.Flag.TUN, TunDevice.Flag.NO_PI));
                try (RtNetlink nl = RtNetlink.open()) {
                    int idx = nl.link(d.name()).orElseThrow().index();
                    assertThat(nl.link(idx).orElseThrow().kind()).isEqualTo("tun");
                    nl.addAddress(idx, IpPrefix.parse("10.99.0.1/32"));
                    nl.setUp(idx);
                    nl.replaceRoute(Route.device(IpPrefix.parse("10.99.1.0/24"), idx));
                }
                return d;
            });
            try (tun) {
                assertThat(tun.name()).startsWith("jtun");
                Process ping = new ProcessBuilder("ip", "netns", "exec", t.name(), "ping", "-c", "1", "-W", "2",
                        "10.99.1.5").redirectErrorStream(true).start();
                ByteBuffer buf = ByteBuffer.allocateDirect(2048);
                boolean answered = false;
                for (int i = 0; i < 20 && !answered; i++) {   // bounded: other packets (e.g. IPv6) may come first
                    assertThat(tun.awaitReadable(5_000)).as("a packet from the pinger within 5 s").isTrue();
                    buf.clear();
                    int n = tun.read(buf);
                    buf.flip();
                    if (n >= 28 && (buf.get(0) >> 4) == 4 && buf.get(9) == 1 && buf.get(20) == 8) {
                        assertThat(ipString(buf, 16)).isEqualTo("10.99.1.5");
                        assertThat(ipString(buf, 12)).isEqualTo("10.99.0.1");
                        Icmp.turnIntoEchoReply(buf);
                        assertThat(tun.write(buf)).isEqualTo(n);
                        answered = true;
                    }
                }
                assertThat(answered).as("an ICMP echo request was read from the TUN").isTrue();
                assertThat(ping.waitFor(10, TimeUnit.SECONDS)).isTrue();
                String out = new String(ping.getInputStream().readAllBytes());
                assertThat(ping.exitValue()).as(out).isZero();
                assertThat(out).contains("1 received");
            }
        }
    }

    @Test
    void aNonBlockingTunReadsWhatIsQueuedAndSaysMinusOneWhenEmpty() throws Exception {
        try (TestNs t = TestNs.create("tunnb")) {
            TunDevice tun = t.ns.call(() -> {
                TunDevice d = TunDevice.open("jtnb%d", EnumSet.of(TunDevice.Flag.TUN, TunDevice.Flag.NO_PI));
                Sysctl.write("net.ipv6.conf." + d.name() + ".disable_ipv6", "1"); // nothing queued but our packets
                try (RtNetlink nl = RtNetlink.open()) {
                    int idx = nl.link(d.name()).orElseThrow().index();
                    nl.addAddress(idx, IpPrefix.parse("10.98.0.1/32"));
                    nl.setUp(idx);
                    nl.replaceRoute(Route.device(IpPrefix.parse("10.98.1.0/24"), idx));
                }
                return d;
            });
            try (tun) {
                tun.setNonBlocking();
                ByteBuffer buf = ByteBuffer.allocateDirect(2048);
                assertThat(tun.tryRead(buf)).as("empty queue: no packet, no exception").isEqualTo(-1);
                assertThat(tun.read(buf)).as("empty queue, errno EAGAIN").isEqualTo(-1);
                assertThat(buf.position()).isZero();

                Process ping = new ProcessBuilder("ip", "netns", "exec", t.name(), "ping", "-c", "2", "-i", "0.2",
                        "-W", "1", "10.98.1.5").redirectErrorStream(true).start();
                try {
                    assertThat(tun.awaitReadable(5_000)).as("the first echo request within 5 s").isTrue();
                    int n = tun.tryRead(buf);
                    assertThat(n).isEqualTo(84).isEqualTo(buf.position()); // 20 + 8 + 56 bytes of ping's payload
                    assertThat(buf.get(9)).as("ICMP").isEqualTo((byte) 1);
                    assertThat(ipString(buf, 16)).isEqualTo("10.98.1.5");
                    assertThat(tun.awaitReadable(5_000)).as("the second echo request within 5 s").isTrue();
                    buf.clear();
                    assertThat(tun.read(buf)).isEqualTo(84);
                    assertThat(tun.tryRead(buf.clear())).as("drained").isEqualTo(-1);
                } finally {
                    ping.destroy();
                    ping.waitFor(5, TimeUnit.SECONDS);
                }
            }
        }
    }

    @Test
    void vnetHeaderTunAcceptsOffloadsAndCloseIsOnce() throws Exception {
        try (TestNs t = TestNs.create("tun")) {
            t.ns.run(() -> {
                TunDevice d = TunDevice.open("jmq%d", EnumSet.of(TunDevice.Flag.TUN, TunDevice.Flag.NO_PI,
                        TunDevice.Flag.VNET_HDR, TunDevice.Flag.MULTI_QUEUE));
                d.setOffload(TunDevice.TUN_F_CSUM | TunDevice.TUN_F_TSO4 | TunDevice.TUN_F_TSO6);
                try (RtNetlink nl = RtNetlink.open()) {
                    assertThat(nl.link(d.name())).isPresent();
                    d.close();
                    d.close();
                    assertThat(nl.link(d.name())).isEmpty(); // non-persistent: gone with its only queue
                }
            });
        }
    }

    private static String ipString(ByteBuffer b, int at) {
        return (b.get(at) & 0xff) + "." + (b.get(at + 1) & 0xff) + "." + (b.get(at + 2) & 0xff) + "." + (b.get(at + 3) & 0xff);
    }
}
