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
    void unknownFlagExits1WithAUsageHint() throws Exception {
        try (DaemonProcess p = DaemonProcess.start(List.of(), Map.of(), "--no-such-flag")) {
            assertThat(p.waitFor(EXIT)).isEqualTo(1);
            assertThat(p.stderr()).isEqualTo("flag provided but not defined: -no-such-flag\nRun 'flanneld --help' for usage.\n");
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
