package org.jflannel.flanneld.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.jflannel.flanneld.testing.DaemonProcess;
import org.jflannel.flanneld.testing.NsEtcd;
import org.jflannel.flanneld.testing.ThrowawayNs;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Fatal start-up errors of REFERENCE §9.3 in etcd mode, the daemon a process in a throwaway namespace. */
@Tag("netns")
@Tag("etcd")
class DaemonStartupFailureIT {
    static final Duration EXIT = Duration.ofSeconds(60);
    static final String CONFIG = "/coreos.com/network/config";

    @Test
    void unknownBackendNoInterfaceAndNoStackExit1WithUpstreamMessages(@TempDir Path dir) throws Exception {
        try (ThrowawayNs ns = ThrowawayNs.create("fdf"); NsEtcd etcd = NsEtcd.start(ns)) {
            etcd.put(CONFIG, "{\"Network\": \"10.244.0.0/16\", \"Backend\": {\"Type\": \"tencentvpc\"}}");
            assertThat(run(ns, dir)).contains("Error fetching backend: ").contains("Backend.Type");

            etcd.put(CONFIG, "{\"Network\": \"10.244.0.0/16\", \"Backend\": {}}");
            assertThat(run(ns, dir)).contains("Error fetching backend: ").contains("unknown backend type: ");

            etcd.put(CONFIG, "{\"EnableIPv4\": false, \"Network\": \"10.244.0.0/16\", \"Backend\": {\"Type\": \"vxlan\"}}");
            assertThat(run(ns, dir)).contains("none defined stack");

            // only loopback, no default route
            etcd.put(CONFIG, "{\"Network\": \"10.244.0.0/16\", \"Backend\": {\"Type\": \"vxlan\"}}");
            assertThat(run(ns, dir)).contains(
                    "Failed to find any valid interface to use: failed to get default interface: Unable to find default route");

            assertThat(run(ns, dir, "--iface=eth9", "--iface-regex=^nope")).contains(
                    "Failed to find interface to use that matches the interfaces and/or regexes provided");
        }
    }

    /** Runs the daemon to its exit; asserts exit code 1; returns stderr. */
    private static String run(ThrowawayNs ns, Path dir, String... extra) throws Exception {
        String[] args = new String[extra.length + 2];
        args[0] = "--etcd-endpoints=" + NsEtcd.ENDPOINT;
        args[1] = "--subnet-file=" + dir.resolve("subnet.env");
        System.arraycopy(extra, 0, args, 2, extra.length);
        try (DaemonProcess d = DaemonProcess.start(ns.execPrefix(), Map.of(), args)) {
            assertThat(d.waitFor(EXIT)).as("%s", d.stderr()).isEqualTo(1);
            assertThat(dir.resolve("subnet.env")).doesNotExist();
            return d.stderr();
        }
    }
}
