package org.jflannel.subnet.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The TCP readiness probe, against sockets on loopback. */
class EtcdProbeTest {

    @Test
    void endpointsAreParsedAsHostAndPortWithEtcdsDefaultPort() {
        assertThat(EtcdProbe.address("http://127.0.0.1:4001")).isEqualTo(InetSocketAddress.createUnresolved("127.0.0.1", 4001));
        assertThat(EtcdProbe.address("https://etcd.example:2379")).isEqualTo(InetSocketAddress.createUnresolved("etcd.example", 2379));
        assertThat(EtcdProbe.address("http://10.0.0.1")).isEqualTo(InetSocketAddress.createUnresolved("10.0.0.1", 2379));
        assertThat(EtcdProbe.address("10.0.0.2:2379")).isEqualTo(InetSocketAddress.createUnresolved("10.0.0.2", 2379));
        assertThat(EtcdProbe.address("unix:///run/etcd.sock")).isNull();
        assertThat(EtcdProbe.address("http://[bad")).isNull();
    }

    @Test
    void reachableWhileAnyEndpointListensAndNotAfterItCloses() throws Exception {
        int closedPort;
        try (ServerSocket gone = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = gone.getLocalPort();
        }
        try (ServerSocket up = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            EtcdProbe probe = new EtcdProbe(List.of("http://127.0.0.1:" + closedPort, "http://127.0.0.1:" + up.getLocalPort()),
                    Duration.ofMillis(100));
            assertThat(probe.reachable()).isTrue();
            assertThat(probe.await(Duration.ofSeconds(5), () -> false, "test")).isTrue();
        }
        EtcdProbe down = new EtcdProbe(List.of("http://127.0.0.1:" + closedPort), Duration.ofMillis(20));
        assertThat(down.reachable()).isFalse();
    }

    @Test
    void awaitGivesUpWhenToldToStopOrWhenTheBoundPasses() throws Exception {
        int closedPort;
        try (ServerSocket gone = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = gone.getLocalPort();
        }
        EtcdProbe down = new EtcdProbe(List.of("http://127.0.0.1:" + closedPort), Duration.ofMillis(20));
        AtomicInteger asked = new AtomicInteger();
        assertThat(down.await(Duration.ofMinutes(5), () -> asked.incrementAndGet() > 3, "test")).isFalse();
        assertThat(asked).hasValueGreaterThan(3);
        assertThat(down.await(Duration.ofMillis(50), () -> false, "test")).isFalse();
    }

    @Test
    void withNothingProbeableItNeverBlocks() throws Exception {
        EtcdProbe none = new EtcdProbe(List.of("unix:///run/etcd.sock"), Duration.ofSeconds(1));
        assertThat(none.reachable()).isTrue();
        assertThat(none.await(Duration.ofMinutes(5), () -> false, "test")).isTrue();
    }
}
