package org.jflannel.backend.ipsec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testsupport.cluster.Wait;
import org.jflannel.testsupport.netns.NetnsTest;
import org.junit.jupiter.api.io.TempDir;

/** The supervisor against the real charon: killed, it comes back with the PSKs and connections replayed. */
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
}
