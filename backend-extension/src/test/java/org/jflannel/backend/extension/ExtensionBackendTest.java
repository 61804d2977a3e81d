package org.jflannel.backend.extension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.NetConf;
import org.jflannel.testsupport.backend.FakeSubnets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Real processes (a small recording script run by /bin/sh), no root: what each command is given and what comes of it. */
class ExtensionBackendTest {
    @TempDir
    Path dir;

    private static Inet4Address ip(String s) throws IOException {
        return (Inet4Address) InetAddress.getByName(s);
    }

    private ExternalInterface ext() throws IOException {
        return new ExternalInterface("eth0", 2, 1480, ip("192.0.2.1"), null, null, null);
    }

    /** A script that appends "<tag> args=<argv> subnet=<SUBNET> ip=<PUBLIC_IP> net=<NETWORK> stdin=<stdin>" to a log and prints {@code out}. */
    private String recorder(String tag, String out, int exit) throws IOException {
        Path script = dir.resolve(tag + ".sh");
        Files.writeString(script, "read -r line\n"
                + "echo \"" + tag + " args=$* subnet=$SUBNET ip=$PUBLIC_IP net=$NETWORK stdin=$line\" >> " + dir.resolve("log") + "\n"
                + "echo '" + out + "'\nexit " + exit + "\n");
        return "/bin/sh " + script + " $SUBNET";
    }

    private List<String> log() throws IOException {
        Path log = dir.resolve("log");
        return Files.exists(log) ? Files.readAllLines(log) : List.of();
    }

    private NetConf conf(String backend) throws Exception {
        return NetConf.parse("{\"Network\":\"10.244.0.0/16\",\"Backend\":" + backend + "}", NetConf.Mode.ETCD);
    }

    private static String json(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static Lease peer(String subnet, String ip, String type, String data) throws IOException {
        return new Lease(Ip4Net.parse(subnet), null, new LeaseAttrs(ip(ip), null, type, data, null), Instant.now().plusSeconds(60));
    }

    @Test
    void preStartupOutputIsTheLeasesBackendDataAndPostStartupSeesTheLease() throws Exception {
        String cfg = "{\"Type\":\"extension\",\"PreStartupCommand\":" + json(recorder("pre", "tunnel-key-1", 0))
                + ",\"PostStartupCommand\":" + json(recorder("post", "done", 0)) + "}";
        FakeSubnets subnets = new FakeSubnets(conf(cfg), Ip4Net.parse("10.244.7.0/24"), null);

        try (ExtensionNetwork n = new ExtensionBackend(ext()).register(conf(cfg), subnets)) {
            assertThat(subnets.published()).isEqualTo(new LeaseAttrs(ip("192.0.2.1"), null, "extension", "\"tunnel-key-1\"", null));
            assertThat(n.mtu()).isEqualTo(1480);
            assertThat(log()).containsExactly(
                    "pre args= subnet= ip= net= stdin=",
                    "post args=10.244.7.0/24 subnet=10.244.7.0/24 ip=192.0.2.1 net=10.244.0.0/16 stdin=");
        }
    }

    @Test
    void aFailingPreOrPostStartupCommandStopsRegistrationWithItsStatusAndOutput() throws Exception {
        String pre = "{\"Type\":\"extension\",\"PreStartupCommand\":" + json(recorder("pre", "no key here", 3)) + "}";
        assertThatThrownBy(() -> new ExtensionBackend(ext()).register(conf(pre),
                new FakeSubnets(conf(pre), Ip4Net.parse("10.244.7.0/24"), null)))
                .isInstanceOf(IOException.class).hasMessageContaining("Err: exit status 3 Output: no key here");

        String post = "{\"Type\":\"extension\",\"PostStartupCommand\":\"/nonexistent/route-tool add\"}";
        assertThatThrownBy(() -> new ExtensionBackend(ext()).register(conf(post),
                new FakeSubnets(conf(post), Ip4Net.parse("10.244.7.0/24"), null)))
                .isInstanceOf(IOException.class).hasMessageContaining("failed to run command: /nonexistent/route-tool add Err: not run");
    }

    @Test
    void peersRunTheAddAndRemoveCommandsWithTheirDataOnStdinAndFailuresDoNotStopTheOthers() throws Exception {
        String cfg = "{\"Type\":\"extension\",\"SubnetAddCommand\":" + json(recorder("add", "ok", 0))
                + ",\"SubnetRemoveCommand\":" + json(recorder("remove", "gone", 0)) + "}";
        FakeSubnets subnets = new FakeSubnets(conf(cfg), Ip4Net.parse("10.244.7.0/24"), null);
        try (ExtensionNetwork n = new ExtensionBackend(ext()).register(conf(cfg), subnets)) {
            n.apply(List.of(
                    LeaseEvent.added(peer("10.244.8.0/24", "192.0.2.8", "extension", "\"key-8\"")),
                    LeaseEvent.added(peer("10.244.9.0/24", "192.0.2.9", "vxlan", "{\"VNI\":1}")),        // another backend: ignored
                    LeaseEvent.added(peer("10.244.10.0/24", "192.0.2.10", "extension", "{\"not\":\"a string\"}")), // skipped
                    LeaseEvent.added(peer("10.244.11.0/24", "192.0.2.11", "extension", null)),
                    LeaseEvent.removed(peer("10.244.8.0/24", "192.0.2.8", "extension", "\"key-8\""))));
            assertThat(log()).containsExactly(
                    "add args=10.244.8.0/24 subnet=10.244.8.0/24 ip=192.0.2.8 net= stdin=key-8",
                    "add args=10.244.11.0/24 subnet=10.244.11.0/24 ip=192.0.2.11 net= stdin=",
                    "remove args=10.244.8.0/24 subnet=10.244.8.0/24 ip=192.0.2.8 net= stdin=key-8");
            assertThat(n.failures()).isZero();
        }

        String failing = "{\"Type\":\"extension\",\"SubnetAddCommand\":" + json(recorder("add", "route refused", 2)) + "}";
        try (ExtensionNetwork n = new ExtensionBackend(ext()).register(conf(failing), subnets)) {
            n.apply(List.of(LeaseEvent.added(peer("10.244.12.0/24", "192.0.2.12", "extension", null)),
                    LeaseEvent.added(peer("10.244.13.0/24", "192.0.2.13", "extension", null))));
            assertThat(n.failures()).isEqualTo(2);
            assertThat(log()).endsWith("add args=10.244.12.0/24 subnet=10.244.12.0/24 ip=192.0.2.12 net= stdin=",
                    "add args=10.244.13.0/24 subnet=10.244.13.0/24 ip=192.0.2.13 net= stdin=");
        }
    }

    @Test
    void aChangedLeaseOnlyRunsTheAddCommandAgainAndOneTurnedUnusableRunsNothing() throws Exception {
        String cfg = "{\"Type\":\"extension\",\"SubnetAddCommand\":" + json(recorder("add", "ok", 0))
                + ",\"SubnetRemoveCommand\":" + json(recorder("remove", "gone", 0)) + "}";
        FakeSubnets subnets = new FakeSubnets(conf(cfg), Ip4Net.parse("10.244.7.0/24"), null);
        try (ExtensionNetwork n = new ExtensionBackend(ext()).register(conf(cfg), subnets)) {
            n.apply(List.of(LeaseEvent.added(peer("10.244.8.0/24", "192.0.2.8", "extension", "\"key-8\""))));
            n.apply(List.of(LeaseEvent.added(peer("10.244.8.0/24", "192.0.2.88", "extension", "\"key-8b\""))));
            n.apply(List.of(LeaseEvent.added(peer("10.244.8.0/24", "192.0.2.88", "extension", "{\"not\":\"a string\"}"))));
            n.apply(List.of(LeaseEvent.removed(peer("10.244.8.0/24", "192.0.2.88", "extension", "{\"not\":\"a string\"}"))));
            assertThat(log()).as("as upstream: never remove-then-add, nothing for data that does not decode").containsExactly(
                    "add args=10.244.8.0/24 subnet=10.244.8.0/24 ip=192.0.2.8 net= stdin=key-8",
                    "add args=10.244.8.0/24 subnet=10.244.8.0/24 ip=192.0.2.88 net= stdin=key-8b");
        }
    }

    @Test
    void aCommandThatHangsIsKilledAfterItsTimeoutAndTheNextRuns() throws Exception {
        CommandRunner runner = new CommandRunner(Map.of("PATH", "/usr/bin:/bin"), Duration.ofMillis(300));
        CommandRunner.Result r = runner.run("sleep 30", Map.of(), "");
        assertThat(r.ok()).isFalse();
        assertThat(r.output()).startsWith("killed after");
        assertThat(runner.run("echo  $X", Map.of("X", "next"), "").output()).isEqualTo("next");
    }

    @Test
    void allocPublishesOnlyThePublicIpAndProgramsNothing() throws Exception {
        NetConf c = conf("{\"Type\":\"alloc\"}");
        FakeSubnets subnets = new FakeSubnets(c, Ip4Net.parse("10.244.7.0/24"), null);
        var n = new AllocBackend(ext()).register(c, subnets);
        assertThat(subnets.published()).isEqualTo(new LeaseAttrs(ip("192.0.2.1"), null, "", null, null));
        assertThat(n.mtu()).isEqualTo(1480);
        assertThat(n.lease().subnet()).isEqualTo(Ip4Net.parse("10.244.7.0/24"));
        n.apply(List.of(LeaseEvent.added(peer("10.244.8.0/24", "192.0.2.8", "", null))));
        n.close();
    }
}
