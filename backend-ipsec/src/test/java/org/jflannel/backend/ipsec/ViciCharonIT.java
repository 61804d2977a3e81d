package org.jflannel.backend.ipsec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jflannel.backend.ipsec.vici.ViciClient;
import org.jflannel.backend.ipsec.vici.ViciException;
import org.jflannel.backend.ipsec.vici.ViciMessage;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testsupport.netns.NetnsTest;
import org.junit.jupiter.api.io.TempDir;

/**
 * Our VICI client against the real charon (Debian's strongSwan), started in a throwaway namespace:
 * the commands the backend uses, with the connection upstream loads for a peer.
 */
class ViciCharonIT {
    private static final String PSK = "p".repeat(96);

    @TempDir
    Path dir;

    @NetnsTest
    void theBackendsCommandsWorkAgainstCharon(NetNs node) throws Exception {
        CharonNs.underlay(node, "192.0.2.1/24");
        IpsecPeer peer = new IpsecPlanner(Leases.lease("10.244.1.0/24", "192.0.2.1"), "aes128gcm16-sha256-prfsha256-ecp256", false)
                .plan(Leases.lease("10.244.2.0/24", "192.0.2.2"));
        long pid;
        try (Charon charon = Charon.start(CharonNs.settings(node, dir));
             ViciClient vici = ViciClient.connect(dir.resolve("charon.vici"), Duration.ofSeconds(10))) {
            pid = charon.pid();
            ViciMessage version = vici.version();
            assertThat(version.value("daemon")).isEqualTo("charon");
            assertThat(version.value("version")).startsWith("5.");

            vici.loadSharedIke(PSK, List.of("192.0.2.1"));
            vici.loadSharedIke(PSK, List.of("192.0.2.2")); // success=yes, else a ViciException (get-shared lists only keys with an id; upstream sends none)

            vici.loadConn(peer.connName(), peer.conn());
            assertThat(vici.listConns()).as(CharonNs.log(dir)).containsExactly("192.0.2.1-10.244.1.0/24-10.244.2.0/24-192.0.2.2");

            vici.terminateIke(peer.connName()); // whether the initiation (start_action=start) already began or not
            vici.unloadConn(peer.connName());
            assertThat(vici.listConns()).isEmpty();
            assertThatThrownBy(() -> vici.unloadConn(peer.connName()))
                    .isInstanceOf(ViciException.class).hasMessageStartingWith("vici unload-conn " + peer.connName() + ": ");
            assertThatThrownBy(() -> vici.request("no-such-command", ViciMessage.EMPTY))
                    .isInstanceOf(ViciException.class).hasMessage("vici no-such-command: unknown command");
        }
        assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).as("charon ended").isEmpty();
        assertThat(Files.exists(dir.resolve("charon.vici"))).as("its socket removed").isFalse();
    }

    @NetnsTest
    void charonRefusesAnUnknownEspProposalNamingIt(NetNs node) throws Exception {
        CharonNs.underlay(node, "192.0.2.1/24");
        IpsecPeer peer = new IpsecPlanner(Leases.lease("10.244.1.0/24", "192.0.2.1"), "aes128gcm16-nosuchalg", false)
                .plan(Leases.lease("10.244.2.0/24", "192.0.2.2"));
        try (Charon charon = Charon.start(CharonNs.settings(node, dir));
             ViciClient vici = ViciClient.connect(dir.resolve("charon.vici"), Duration.ofSeconds(10))) {
            assertThatThrownBy(() -> vici.loadConn(peer.connName(), peer.conn()))
                    .isInstanceOf(ViciException.class).hasMessageContaining("esp_proposals");
            assertThat(vici.listConns()).isEmpty();
        }
    }
}
