package org.jflannel.testsupport.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.jflannel.testsupport.cluster.ClusterOptions.Mode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HarnessParsingTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "iputils full      | 400 packets transmitted, 398 received, 0.5% packet loss, time 20012ms | 400 | 398",
        "all lost          | 1 packets transmitted, 0 received, 100% packet loss, time 0ms          | 1   | 0",
        "busybox wording   | 3 packets transmitted, 3 packets received, 0% packet loss              | 3   | 3",
        "with errors field | 5 packets transmitted, 4 received, +1 errors, 20% packet loss          | 5   | 4",
    })
    void pingSummaryIsParsed(String name, String line, int transmitted, int received) {
        PingStats s = PingStats.parse("PING 10.244.1.2 (10.244.1.2) 56(84) bytes of data.\n\n--- stats ---\n" + line + "\n");
        assertThat(s.transmitted()).isEqualTo(transmitted);
        assertThat(s.received()).isEqualTo(received);
    }

    @Test
    void pingWithoutSummaryIsAnError() {
        assertThatThrownBy(() -> PingStats.parse("ping: connect: Network is unreachable"))
                .hasMessageContaining("no ping summary");
    }

    @Test
    void answeredRatio() {
        assertThat(new PingStats(400, 396, "").answeredRatio()).isEqualTo(0.99);
        assertThat(new PingStats(0, 0, "").answeredRatio()).isZero();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "ready   | 'HTTP/1.1 200 OK\r\nContent-Length: 17\r\n\r\nflanneld is ready'          | 200 | flanneld is ready",
        "not yet | 'HTTP/1.1 503 Service Unavailable\r\n\r\nflanneld is not ready yet'      | 503 | flanneld is not ready yet",
        "no body | 'HTTP/1.0 404 Not Found\r\n'                                              | 404 | ''",
    })
    void httpResponseIsParsed(String name, String raw, int status, String body) throws Exception {
        NsHttp.Response r = NsHttp.parse(raw.replace("\\r\\n", "\r\n"));
        assertThat(r.status()).isEqualTo(status);
        assertThat(r.body()).isEqualTo(body);
    }

    @Test
    void nonHttpIsAnError() {
        assertThatThrownBy(() -> NsHttp.parse("SSH-2.0-OpenSSH")).hasMessageContaining("not an HTTP response");
    }

    @Test
    void namesFitInFifteenCharactersAndShareTheRunPrefix() {
        ClusterNames n = new ClusterNames("ab1z9");
        assertThat(List.of(n.fabric(), n.node(ClusterOptions.MAX_NODES), n.pod(ClusterOptions.MAX_NODES, 9)))
                .allSatisfy(s -> assertThat(s).hasSizeLessThanOrEqualTo(15).startsWith("jfab1z9"));
        assertThat(ClusterNames.random().id()).matches("[a-z0-9]{5}");
        assertThat(ClusterNames.nodeIp(3)).isEqualTo("192.0.2.13");
        assertThatThrownBy(() -> new ClusterNames("AB")).hasMessageContaining("run id");
    }

    @Test
    void extraFlagsReplaceTheUsualOnesByName() {
        List<String> base = List.of("ip", "netns", "exec", "ns", "bin/flanneld", "--iface=eth0", "--ip-masq",
                "--net-config-path=/a.json");
        assertThat(ClusterNode.withFlags(base, List.of("--net-config-path=/bad.json", "--v=2", "--ip-masq")))
                .containsExactly("ip", "netns", "exec", "ns", "bin/flanneld", "--iface=eth0", "--ip-masq",
                        "--net-config-path=/bad.json", "--v=2");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "defaults        | ''                                   | 3 | ETCD | vxlan | false",
        "all             | --nodes 5 --mode kube --keep         | 5 | KUBE | vxlan | true",
        "equals syntax   | --nodes=2 --mode=etcd --backend=udp  | 2 | ETCD | udp   | false",
        "host-gw         | --backend host-gw --mode kube        | 3 | KUBE | host-gw | false",
        "dual stack      | --dual-stack --backend wireguard --keep | 3 | ETCD | wireguard | true",
        "network policy  | --mode kube --network-policy         | 3 | KUBE | vxlan | false",
    })
    void demoArguments(String name, String line, int nodes, Mode mode, String backend, boolean keep) {
        DemoArgs a = DemoArgs.parse(line.isBlank() ? List.of() : List.of(line.split(" ")));
        assertThat(a.options().nodes()).isEqualTo(nodes);
        assertThat(a.options().mode()).isEqualTo(mode);
        assertThat(a.options().backend()).isEqualTo(backend);
        assertThat(a.keep()).isEqualTo(keep);
        assertThat(a.options().dualStack()).as("dual stack").isEqualTo(line.contains("--dual-stack"));
        assertThat(a.networkPolicy()).isEqualTo(line.contains("--network-policy"));
        assertThat(a.options().daemonEnv()).isEqualTo(line.contains("--network-policy")
                ? java.util.Map.of("FLANNELD_NETWORK_POLICY", "true") : java.util.Map.of());
    }

    @Test
    void demoIpsecGetsAFreshPreSharedKeyOfUpstreamsLength() throws Exception {
        ClusterOptions first = DemoArgs.parse(List.of("--backend", "ipsec")).options();
        ClusterOptions second = DemoArgs.parse(List.of("--backend", "ipsec")).options();
        assertThat(first.backendType()).isEqualTo("ipsec");
        String psk = new com.fasterxml.jackson.databind.ObjectMapper().readTree(first.backend()).path("PSK").asText();
        assertThat(psk).as("upstream refuses a PSK under 96 characters").hasSizeGreaterThanOrEqualTo(96);
        assertThat(second.backend()).as("a fresh key per demo").isNotEqualTo(first.backend());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "too many nodes  | --nodes 51      | --nodes: expected 1..50, got 51",
        "not a number    | --nodes three   | --nodes: expected a number, got \"three\"",
        "bad mode        | --mode consul   | --mode: expected etcd or kube, got \"consul\"",
        "bad backend     | --backend gre   | --backend: expected vxlan, udp, host-gw, wireguard, ipip or ipsec, got \"gre\"",
        "missing value   | --nodes         | --nodes: missing value",
        "unknown option  | --fast          | unknown option: --fast",
        "udp dual stack  | --backend udp --dual-stack | --dual-stack: the udp backend is IPv4 only",
        "policy in etcd  | --network-policy | --network-policy: needs --mode kube (the policies come through the Kubernetes API)",
    })
    void badDemoArgumentsNameTheOption(String name, String line, String message) {
        assertThatThrownBy(() -> DemoArgs.parse(List.of(line.split(" ")))).hasMessage(message);
    }
}
