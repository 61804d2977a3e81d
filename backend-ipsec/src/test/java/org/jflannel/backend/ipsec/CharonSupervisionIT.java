package org.jflannel.backend.ipsec;

import static org.assertj.core.api.Assertions.assertThat;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.backend.ipsec.vici.ViciClient;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testsupport.cluster.Wait;
import org.jflannel.testsupport.netns.NetnsTest;
import org.junit.jupiter.api.io.TempDir;

/**
 * The supervisor against the real charon: killed, it comes back with the PSKs and connections replayed; one
 * that cannot start (its config broken) is reported and retried with back-off while calls fail and are kept;
 * one an earlier daemon left running is ended before ours starts.
 */
class CharonSupervisionIT {
    @TempDir
    Path dir;

    @NetnsTest
    void aKilledCharonIsRestartedAndTheConnectionsReloaded(NetNs node) throws Exception {
        CharonNs.underlay(node, "192.0.2.1/24");
        IpsecPlanner planner = new IpsecPlanner(Leases.lease("10.244.1.0/24", "192.0.2.1"), "aes128gcm16-sha256-prfsha256-ecp256", true);
        IpsecPeer two = planner.plan(Leases.lease("10.244.2.0/24", "192.0.2.2"));
        IpsecPeer three = planner.plan(Leases.lease("10.244.3.0/24", "192.0.2.3"));
        long second;
        try (Charon charon = Charon.start(CharonNs.settings(node, dir))) {
            charon.loadShared("s".repeat(96), List.of("192.0.2.1"));
            charon.loadShared("s".repeat(96), List.of("192.0.2.2"));
            charon.loadConn(two.connName(), two.conn());
            charon.loadConn(three.connName(), three.conn());
            charon.unloadConn(three.connName());
            long first = charon.pid();

            ProcessHandle.of(first).orElseThrow().destroyForcibly(); // SIGKILL: no goodbye
            Wait.until("charon restarted", Duration.ofSeconds(60), () -> charon.starts() == 2 && charon.pid() != first);

            second = charon.pid();
            assertThat(ProcessHandle.of(first).filter(ProcessHandle::isAlive)).isEmpty();
            Wait.until("connections replayed", Duration.ofSeconds(30), () -> charon.vici(org.jflannel.backend.ipsec.vici.ViciClient::listConns).equals(List.of(two.connName())));
        }
        assertThat(ProcessHandle.of(second).filter(ProcessHandle::isAlive)).as("ended on close").isEmpty();
    }

    @NetnsTest
    void aCharonThatCannotStartIsReportedWithItsStatusAndOutputAndRetriedWithBackoff(NetNs node) throws Exception {
        CharonNs.underlay(node, "192.0.2.1/24");
        IpsecPlanner planner = new IpsecPlanner(Leases.lease("10.244.1.0/24", "192.0.2.1"), "aes128gcm16-sha256-prfsha256-ecp256", false);
        IpsecPeer two = planner.plan(Leases.lease("10.244.2.0/24", "192.0.2.2"));
        IpsecPeer three = planner.plan(Leases.lease("10.244.3.0/24", "192.0.2.3"));
        Charon.Settings ns = CharonNs.settings(node, dir);
        Path seen = dir.resolve("charon-reads.conf"); // what charon is pointed at (STRONGSWAN_CONF): the test breaks it
        Files.writeString(seen, CharonConf.strongswanConf(ns.vici()));
        Charon.Settings settings = new Charon.Settings(ns.command(), ns.conf(), ns.vici(), ns.startTimeout(), ns.log(), seen, null, null);
        try (Charon charon = Charon.start(settings)) {
            charon.loadShared("s".repeat(96), List.of("192.0.2.1"));
            charon.loadConn(two.connName(), two.conn());
            Files.writeString(seen, "charon {\n  load = random nonce\n  plugins {\n"); // unterminated: charon refuses it
            long first = charon.pid();
            ProcessHandle.of(first).orElseThrow().destroyForcibly();

            Wait.until("three failed restarts", Duration.ofSeconds(90), () -> charon.failures().size() >= 3);
            List<Charon.Failure> failures = charon.failures();
            assertThat(failures.get(0).message()).as("exit status and charon's own words")
                    .contains("exited with 64 before its VICI socket", "invalid config file '" + seen + "'",
                            "abort initialization due to invalid configuration");
            assertThat(failures.subList(0, 3)).extracting(Charon.Failure::nextTry).as("backing off, not a busy loop")
                    .containsExactly(Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2));
            int startsWhileBroken = charon.starts();
            assertThatThrownBy(() -> charon.loadConn(three.connName(), three.conn())).as("a call while charon is down fails")
                    .isInstanceOf(IOException.class);

            Files.writeString(seen, CharonConf.strongswanConf(ns.vici())); // repaired: the next try succeeds
            Wait.until("charon running again", Duration.ofSeconds(90), () -> {
                try {
                    return charon.vici(ViciClient::listConns).size() == 2;
                } catch (IOException e) {
                    return false;
                }
            });
            assertThat(charon.vici(ViciClient::listConns)).as("the connection of before and the one asked for while it was down")
                    .containsExactlyInAnyOrder(two.connName(), three.connName());
            assertThat(charon.starts()).isGreaterThan(startsWhileBroken - 1).isLessThanOrEqualTo(startsWhileBroken + 1);
            assertThat(charon.failures()).as("failures kept").hasSizeGreaterThanOrEqualTo(3);
        }
    }

    @NetnsTest
    void aCharonLeftRunningByAnEarlierDaemonIsEndedAndOursIsTheOnlyOne(NetNs node) throws Exception {
        CharonNs.underlay(node, "192.0.2.1/24");
        Path run = Files.createDirectories(dir.resolve("run")); // charon's /run, as a private run mounts it
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", node.name()));
        cmd.addAll(IpsecSettings.PRIVATE_RUN);
        cmd.add(CharonNs.charon().toString());
        cmd.add(run.toString());
        Charon.Settings settings = new Charon.Settings(cmd, run.resolve("strongswan.conf"), run.resolve("charon.vici"),
                Duration.ofSeconds(30), dir.resolve("charon.log"), Path.of("/run/strongswan.conf"), Path.of("/run/charon.vici"),
                run.resolve("charon.pid"));
        // what a SIGKILLed flanneld leaves: its charon, with our conf, pidfile and socket, no supervisor
        Files.writeString(settings.conf(), CharonConf.strongswanConf(settings.charonVici()));
        ProcessBuilder pb = new ProcessBuilder(settings.command()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("orphan.log").toFile()));
        pb.environment().put("STRONGSWAN_CONF", settings.charonConf().toString());
        Process orphan = pb.start();
        try {
            Wait.until("the orphan's VICI", Duration.ofSeconds(60), () -> {
                try (ViciClient v = ViciClient.connect(settings.vici(), Duration.ofSeconds(5))) {
                    return v.version() != null;
                } catch (IOException e) {
                    return false;
                }
            });
            assertThat(Files.readString(run.resolve("charon.pid")).strip()).isEqualTo(Long.toString(orphan.pid()));

            try (Charon charon = Charon.start(settings)) {
                assertThat(orphan.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).as("the orphan ended").isTrue();
                assertThat(charon.pid()).isNotEqualTo(orphan.pid());
                assertThat(Files.readString(run.resolve("charon.pid")).strip()).as("one charon: ours, in the pidfile")
                        .isEqualTo(Long.toString(charon.pid()));
                assertThat(charon.vici(ViciClient::version).value("daemon")).isEqualTo("charon");
                assertThat(charon.starts()).isEqualTo(1);
            }
        } finally {
            orphan.destroyForcibly();
            orphan.waitFor(30, java.util.concurrent.TimeUnit.SECONDS);
        }
    }
}
