package org.jflannel.netpol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class DeniedConnectionsTest {
    private static final String IN = DenyLog.PREFIX + "ingress";
    private static final String OUT = DenyLog.PREFIX + "egress";
    private final AtomicLong now = new AtomicLong(1_000_000_000_000L);

    @Test
    void anIpv4TcpSynReadsAsWhoTriedWhichPortAndNamesThePods() {
        DeniedConnections log = new DeniedConnections(10, a -> a.equals(Addr.parse("10.244.1.2")) ? "x/a" : null, now::get);
        assertThat(log.accept(IN, ipv4(6, "10.244.1.2", "10.244.2.3", 43210, 80)))
                .contains("network policy denied direction=ingress protocol=tcp source=10.244.1.2 source_pod=x/a destination=10.244.2.3 port=80");
    }

    @Test
    void anIpv6UdpDatagramAndAnEgressDrop() {
        Optional<DeniedConnections.Denied> d = DeniedConnections.parse(OUT, ipv6(17, "fd00:1::2", "fd00:2::3", 5000, 53));
        assertThat(d).contains(new DeniedConnections.Denied(Direction.EGRESS, "udp", Addr.parse("fd00:1::2"), 5000,
                Addr.parse("fd00:2::3"), 53));
    }

    @Test
    void icmpHasNoPortAndAnotherPrefixOrATruncatedHeaderIsNotOurs() {
        assertThat(DeniedConnections.parse(IN, ipv4(1, "10.0.0.1", "10.0.0.2", 0x0800, 0)).orElseThrow().destinationPort()).isEqualTo(-1);
        assertThat(DeniedConnections.parse("someone else", ipv4(6, "10.0.0.1", "10.0.0.2", 1, 2))).isEmpty();
        byte[] whole = ipv4(6, "10.0.0.1", "10.0.0.2", 1, 2);
        for (int n = 0; n < 20; n++) {
            assertThat(DeniedConnections.parse(IN, java.util.Arrays.copyOf(whole, n))).as("%d bytes", n).isEmpty();
        }
        // the header without the ports (a snapshot that stopped there): the addresses, no port
        assertThat(DeniedConnections.parse(IN, java.util.Arrays.copyOf(whole, 21)).orElseThrow().destinationPort()).isEqualTo(-1);
        byte[] badIhl = whole.clone();
        badIhl[0] = 0x44;
        assertThat(DeniedConnections.parse(IN, badIhl)).isEmpty();
        assertThat(DeniedConnections.parse(IN, java.util.Arrays.copyOf(ipv6(6, "::1", "::2", 1, 2), 39))).isEmpty();
    }

    @Test
    void theSameAttemptIsOneLineUntilTheRepeatWindowEnds() {
        DeniedConnections log = new DeniedConnections(10, a -> null, now::get);
        assertThat(log.accept(IN, ipv4(6, "10.0.0.1", "10.0.0.2", 40000, 80))).isPresent();
        now.addAndGet(1_000_000_000L);
        assertThat(log.accept(IN, ipv4(6, "10.0.0.1", "10.0.0.2", 40000, 80))).as("the SYN again").isEmpty();
        assertThat(log.accept(IN, ipv4(6, "10.0.0.1", "10.0.0.2", 40001, 80))).as("a new socket, same attempt").isEmpty();
        assertThat(log.accept(IN, ipv4(6, "10.0.0.1", "10.0.0.2", 40001, 81))).as("another port").isPresent();
        now.addAndGet(DeniedConnections.REPEAT_NANOS);
        assertThat(log.accept(IN, ipv4(6, "10.0.0.1", "10.0.0.2", 40000, 80))).as("after the window").isPresent();
        assertThat(log.repeats()).isEqualTo(2);
    }

    @Test
    void aFloodOfDistinctAttemptsGivesAtMostTheRateAndOneSummaryPerInterval() {
        DeniedConnections log = new DeniedConnections(5, a -> null, now::get);
        List<String> lines = new ArrayList<>();
        for (int second = 0; second < 20; second++) {
            log.summary().ifPresent(lines::add);
            for (int n = 0; n < 1000; n++) {
                log.accept(IN, ipv4(17, "10.0.0.1", "10.0." + second + "." + (n % 250), 1, 1 + n)).ifPresent(lines::add);
            }
            now.addAndGet(1_000_000_000L);
        }
        assertThat(lines.stream().filter(l -> l.startsWith("network policy denied direction="))).hasSize(20 * 5);
        List<String> summaries = lines.stream().filter(l -> l.contains("not logged")).toList();
        assertThat(summaries).hasSize(1);
        assertThat(summaries.get(0)).startsWith("network policy denied connections not logged count=" + (10 * 995) + " seconds=10");
        assertThat(log.summary()).hasValueSatisfying(l -> assertThat(l).contains("count=" + (10 * 995) + " seconds=10"));
        assertThat(log.summary()).as("at most one per interval").isEmpty();
        assertThat(log.logged()).isEqualTo(100);
    }

    @Test
    void theTableSettingRendersTheLimitAndTheLogBeforeEveryDrop() {
        ClusterState s = Fixtures.state(List.of(Fixtures.pod("x", "b", "n1", "10.244.1.3", java.util.Map.of("pod", "b"))),
                List.of(Fixtures.ingress("x", "closed", Fixtures.sel("pod", "b"))));
        NodeRules rules = Compiler.compile(s, "n1");
        String on = NftScript.replace(rules, new DenyLog(7, 40));
        assertThat(on).contains("limit deny_log { rate 40/second burst 80 packets; }")
                .contains("limit name \"deny_log\" log prefix \"jflannel-netpol ingress\" group 7 snaplen 128\n"
                        + "    counter name dropped_ingress drop");
        assertThat(NftScript.replace(rules)).doesNotContain("log").doesNotContain("limit");
        assertThat(NftScript.update(Compiler.compile(Fixtures.state(List.of(), List.of()), "n1"), rules, new DenyLog(7, 40)))
                .contains("add rule inet jflannel-netpol ");
    }

    static byte[] ipv4(int proto, String src, String dst, int sport, int dport) {
        byte[] p = new byte[28];
        p[0] = 0x45;
        p[8] = 64;
        p[9] = (byte) proto;
        put(p, 12, Addr.parse(src));
        put(p, 16, Addr.parse(dst));
        ports(p, 20, sport, dport);
        return p;
    }

    static byte[] ipv6(int proto, String src, String dst, int sport, int dport) {
        byte[] p = new byte[48];
        p[0] = 0x60;
        p[6] = (byte) proto;
        p[7] = 64;
        put(p, 8, Addr.parse(src));
        put(p, 24, Addr.parse(dst));
        ports(p, 40, sport, dport);
        return p;
    }

    private static void put(byte[] p, int at, Addr a) {
        if (a.family() == 4) {
            for (int i = 0; i < 4; i++) {
                p[at + i] = (byte) (a.low() >>> (24 - 8 * i));
            }
        } else {
            for (int i = 0; i < 8; i++) {
                p[at + i] = (byte) (a.high() >>> (56 - 8 * i));
                p[at + 8 + i] = (byte) (a.low() >>> (56 - 8 * i));
            }
        }
    }

    private static void ports(byte[] p, int at, int sport, int dport) {
        p[at] = (byte) (sport >>> 8);
        p[at + 1] = (byte) sport;
        p[at + 2] = (byte) (dport >>> 8);
        p[at + 3] = (byte) dport;
    }
}
