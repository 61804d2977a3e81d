package org.jflannel.testsupport.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class PingTimelineTest {
    private static final Pod A = new Pod("node1/pod1", 1, "a-ns", "10.244.0.2");
    private static final Pod B = new Pod("node2/pod1", 2, "b-ns", "10.244.1.2");
    private static final Instant T0 = Instant.ofEpochSecond(1795630024);

    private static String reply(String stamp, int seq) {
        return "[" + stamp + "] 64 bytes from 10.244.1.2: icmp_seq=" + seq + " ttl=62 time=0.101 ms\n";
    }

    private static Instant at(double seconds) {
        return T0.plusNanos(Math.round(seconds * 1e9));
    }

    @Test
    void repliesAreReadFromPingsTimestampsAndDuplicatesAndOtherLinesLeftOut() {
        String out = "PING 10.244.1.2 (10.244.1.2) 56(84) bytes of data.\n"
                + reply("1795630024.200000", 1)
                + "[1795630024.200100] 64 bytes from 10.244.1.2: icmp_seq=1 ttl=62 time=0.2 ms (DUP!)\n"
                + "[1795630024.600000] From 10.244.0.1 icmp_seq=2 Destination Host Unreachable\n"
                + reply("1795630024.902577", 3)
                + "\n--- 10.244.1.2 ping statistics ---\n3 packets transmitted, 2 received, 33% packet loss, time 400ms\n";
        PingTimeline t = PingTimeline.parse(A, B, T0, at(1.0), out);
        assertThat(t.replies()).containsExactly(at(0.2), at(0.902577));
        assertThat(t.pair()).isEqualTo("node1/pod1 -> node2/pod1");
    }

    @Test
    void theLongestGapIsBetweenConsecutiveReplies() {
        String out = reply("1795630024.100000", 1) + reply("1795630024.300000", 2) + reply("1795630027.300000", 17)
                + reply("1795630027.500000", 18);
        PingTimeline t = PingTimeline.parse(A, B, T0, at(3.6), out);
        assertThat(t.longestGap()).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void aPairThatStoppedAnsweringShowsAGapRunningToTheStop() {
        PingTimeline t = PingTimeline.parse(A, B, T0, at(60), reply("1795630024.100000", 1) + reply("1795630024.300000", 2));
        assertThat(t.longestGap()).isEqualTo(Duration.ofMillis(59_700));
    }

    @Test
    void aPairThatNeverAnsweredShowsTheWholeRunAsAGap() {
        PingTimeline t = PingTimeline.parse(A, B, T0, at(42), "ping: connect: Network is unreachable\n");
        assertThat(t.longestGap()).isEqualTo(Duration.ofSeconds(42));
        assertThat(t.repliesDuring(T0, at(42))).isZero();
    }

    @Test
    void aWindowSeesTheWholeOfEveryGapThatOverlapsIt() {
        // replies every 0.2 s but for an outage from 4.0 to 9.0
        StringBuilder out = new StringBuilder();
        int seq = 1;
        for (int ms = 200; ms <= 12_000; ms += 200) {
            if (ms <= 4_000 || ms >= 9_000) {
                long s = 1795630024L + ms / 1000;
                out.append(reply(s + "." + String.format("%06d", (ms % 1000) * 1000), seq));
            }
            seq++;
        }
        PingTimeline t = PingTimeline.parse(A, B, T0, at(12.1), out.toString());
        assertThat(t.longestGapDuring(at(0), at(3))).as("before the outage").isEqualTo(Duration.ofMillis(200));
        assertThat(t.longestGapDuring(at(3), at(5))).as("a window where the outage began").isEqualTo(Duration.ofSeconds(5));
        assertThat(t.longestGapDuring(at(8), at(10))).as("a window where it ended").isEqualTo(Duration.ofSeconds(5));
        assertThat(t.longestGapDuring(at(10), at(12.1))).as("after it").isEqualTo(Duration.ofMillis(200));
        assertThat(t.repliesDuring(at(4.1), at(9))).isZero();
    }

    @Test
    void aStopBeforeTheStartIsRefusedNamingThePair() {
        assertThatThrownBy(() -> new PingTimeline(A, B, at(5), at(1), java.util.List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("node1/pod1 -> node2/pod1");
    }
}
