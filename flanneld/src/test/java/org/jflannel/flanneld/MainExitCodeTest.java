package org.jflannel.flanneld;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jflannel.flanneld.testing.DaemonProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real process: exit codes and messages of REFERENCE §9.3 that need no privileges. */
class MainExitCodeTest {
    static final Duration EXIT = Duration.ofSeconds(60);

    @Test
    void malformedNetConfInKubeModeExits1NamingTheField(@TempDir Path dir) throws Exception {
        Path conf = dir.resolve("net-conf.json");
        Files.writeString(conf, "{\"Network\": \"10.244.0.0/16\", \"SubnetLen\": \"x\", \"Backend\": {\"Type\": \"vxlan\"}}");
        // the file is read before the API is contacted: no Kubernetes API is needed (port 9 is never listened on)
        try (DaemonProcess p = DaemonProcess.start(List.of(), Map.of("NODE_NAME", "node-1"),
                "--kube-subnet-mgr", "--kube-api-url=http://127.0.0.1:9", "--net-config-path", conf.toString())) {
            assertThat(p.waitFor(EXIT)).isEqualTo(1);
            assertThat(p.stderr()).contains("Failed to create SubnetManager: error parsing subnet config: ")
                    .contains("SubnetLen");
        }
    }

    @Test
    void emptyBackendTypeExits1(@TempDir Path dir) throws Exception {
        Path conf = dir.resolve("net-conf.json");
        Files.writeString(conf, "{\"Network\": \"10.244.0.0/16\", \"Backend\": {}}");
        try (DaemonProcess p = DaemonProcess.start(List.of(), Map.of("NODE_NAME", "node-1"),
                "--kube-subnet-mgr", "--kube-api-url=http://127.0.0.1:9", "--net-config-path", conf.toString())) {
            assertThat(p.waitFor(EXIT)).isEqualTo(1);
            assertThat(p.stderr()).contains("unknown backend type: ");
        }
    }

    @Test
    void sigtermWhileTheConfigIsRetriedExits0AndReadyzStays503(@TempDir Path dir) throws Exception {
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        // etcd mode against a port nobody listens on: the config is retried every second, nothing else happens
        try (DaemonProcess p = DaemonProcess.start(List.of(), Map.of(), "--etcd-endpoints=http://127.0.0.1:9",
                "--subnet-file=" + dir.resolve("subnet.env"), "--healthz-ip=127.0.0.1", "--healthz-port=" + port)) {
            assertThat(p.awaitStderr(s -> s.contains("Couldn't fetch network config"), EXIT)).as("%s", p.stderr()).isTrue();
            java.net.HttpURLConnection c = (java.net.HttpURLConnection)
                    new java.net.URL("http://127.0.0.1:" + port + "/readyz").openConnection();
            c.setConnectTimeout(5000);
            c.setReadTimeout(5000);
            assertThat(c.getResponseCode()).isEqualTo(503);
            assertThat(new String(c.getErrorStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8))
                    .isEqualTo("flanneld is not ready yet");
            p.terminate();
            assertThat(p.waitFor(EXIT)).isZero();
            assertThat(p.stderr()).contains("Exiting cleanly...");
            assertThat(dir.resolve("subnet.env")).doesNotExist();
        }
    }

    @Test
    void unknownFlagExits1WithAUsageHint() throws Exception {
        try (DaemonProcess p = DaemonProcess.start(List.of(), Map.of(), "--no-such-flag")) {
            assertThat(p.waitFor(EXIT)).isEqualTo(1);
            assertThat(p.stderr()).isEqualTo("flag provided but not defined: -no-such-flag\nRun 'flanneld --help' for usage.\n");
        }
    }

    @Test
    void aFlagGivenTwiceTakesTheLastValueWithoutAStackTrace() throws Exception {
        // the last value (out of range) wins, so the run stops at validation, after parsing succeeded
        try (DaemonProcess p = DaemonProcess.start(List.of(), Map.of(),
                "--subnet-lease-renew-margin=30", "--subnet-lease-renew-margin", "1440")) {
            assertThat(p.waitFor(EXIT)).isEqualTo(1);
            assertThat(p.stderr()).contains("subnetLeaseRenewMargin:1440",
                    "Invalid subnet-lease-renew-margin option, out of acceptable range")
                    .doesNotContain("Exception", "\tat ");
        }
    }

    @Test
    void invalidVariableExits1NamingIt() throws Exception {
        try (DaemonProcess p = DaemonProcess.start(List.of(), Map.of("FLANNELD_IPTABLES_RESYNC", "soon"))) {
            assertThat(p.waitFor(EXIT)).isEqualTo(1);
            assertThat(p.stderr()).contains("invalid value \"soon\" for FLANNELD_IPTABLES_RESYNC: parse error");
        }
    }

    @Test
    void versionGoesToStderrAndExits0() throws Exception {
        try (DaemonProcess p = DaemonProcess.start(List.of(), Map.of(), "-version")) {
            assertThat(p.waitFor(EXIT)).isZero();
            assertThat(p.stderr()).matches("v\\d+\\.\\d+\\.\\d+.*\n");
        }
    }

    @Test
    void renewMarginOutOfRangeExits1AfterLoggingTheFlagsWithThePasswordMasked() throws Exception {
        try (DaemonProcess p = DaemonProcess.start(List.of(), Map.of("FLANNELD_ETCD_PASSWORD", "hunter2"),
                "--subnet-lease-renew-margin=1440")) {
            assertThat(p.waitFor(EXIT)).isEqualTo(1);
            String err = p.stderr();
            assertThat(err).contains("CLI flags config: {", "Invalid subnet-lease-renew-margin option, out of acceptable range")
                    .doesNotContain("hunter2");
            assertThat(err.indexOf("CLI flags config")).isLessThan(err.indexOf("Invalid subnet-lease-renew-margin"));
        }
    }
}
