package org.jflannel.backend.ipsec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.jflannel.core.ConfigException;
import org.jflannel.core.LeaseEvent;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The backend on one node against the real kernel (XFRM policies; this host has no ESP, so no SA comes
 * up: the two-node data path needs the kernel VM) and the real charon: a peer's policies and connection
 * come and go with its lease, a reconcile puts back what was removed behind our back, close ends charon.
 */
@Tag("netns")
class IpsecNetworkIT {
    @TempDir
    Path dir;

    @Test
    void aPeerLeaseBringsPoliciesAndConnectionAndTakesThemAway() throws Exception {
        try (IpsecNode node = IpsecNode.create()) {
            IpsecNetwork net = node.register(IpsecNode.conf(""), "10.244.1.0/24", dir);
            assertThat(net.mtu()).isEqualTo(1423);
            Charon charon = charonOf(net);
            node.apply(LeaseEvent.added(Leases.lease("10.244.2.0/24", "192.0.2.2")),
                    LeaseEvent.added(Leases.lease("10.244.9.0/24", "192.0.2.9", "vxlan")));
            assertThat(node.policies()).containsExactlyInAnyOrder(
                    "src 10.244.1.0/24 dst 10.244.2.0/24 out src 192.0.2.1 dst 192.0.2.2 reqid 11",
                    "src 10.244.2.0/24 dst 10.244.1.0/24 in src 192.0.2.2 dst 192.0.2.1 reqid 11",
                    "src 10.244.2.0/24 dst 10.244.1.0/24 fwd src 192.0.2.2 dst 192.0.2.1 reqid 11");
            assertThat(conns(charon)).containsExactly("192.0.2.1-10.244.1.0/24-10.244.2.0/24-192.0.2.2");

            node.ip("xfrm", "policy", "delete", "src", "10.244.2.0/24", "dst", "10.244.1.0/24", "dir", "fwd");
            charon.vici(v -> {
                v.unloadConn("192.0.2.1-10.244.1.0/24-10.244.2.0/24-192.0.2.2");
                return null;
            });
            node.reconcile();
            assertThat(node.policies()).hasSize(3);
            assertThat(conns(charon)).hasSize(1);

            node.apply(LeaseEvent.removed(Leases.lease("10.244.2.0/24", "192.0.2.2")));
            assertThat(node.policies()).isEmpty();
            assertThat(conns(charon)).isEmpty();
            long pid = charon.pid();
            net.close();
            assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).as("charon ended").isEmpty();
        }
    }

    @Test
    void anEspProposalCharonRefusesFailsRegistrationNamingTheField() throws Exception {
        try (IpsecNode node = IpsecNode.create()) {
            assertThatThrownBy(() -> node.register(IpsecNode.conf(",\"ESPProposal\":\"aes128gcm16-nosuch\""), "10.244.1.0/24", dir))
                    .isInstanceOfSatisfying(ConfigException.class, e -> {
                        assertThat(e.field()).isEqualTo("Backend.ESPProposal");
                        assertThat(e.getMessage()).isEqualTo("charon refuses \"aes128gcm16-nosuch\": vici load-conn jflannel-esp-probe: "
                                + "invalid value for: esp_proposals, config discarded");
                    });
            assertThat(CharonNs.log(dir)).contains("SIGTERM received, shutting down");
        }
    }

    private static java.util.List<String> conns(Charon charon) throws java.io.IOException {
        return charon.vici(org.jflannel.backend.ipsec.vici.ViciClient::listConns);
    }

    private static Charon charonOf(IpsecNetwork net) {
        return net.charon();
    }
}
