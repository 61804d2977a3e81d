package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.TestNs;
import org.jflannel.linuxnet.internal.Errno;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Generic netlink against this kernel: the family lookup through the real controller, and what the
 * kernel answers for WireGuard, whichever it is: with the module a device and the family, without
 * (as this project's machines) EOPNOTSUPP for the link and ENOENT for the family, nothing left
 * behind. The requests' success path runs against a real WireGuard in the kernel VM test
 * (backend-wireguard's {@code KernelModeVmIT}).
 */
@Tag("netns")
class WireguardNetlinkIT {
    private TestNs t;

    @BeforeEach
    void namespace() throws Exception {
        t = TestNs.create("wgnl");
    }

    @AfterEach
    void cleanup() throws Exception {
        t.close();
    }

    @Test
    void theControllerResolvesFamiliesByName() throws Exception {
        assertThat(WireguardNetlink.familyId("nlctrl")).isEqualTo(WireguardGenl.GENL_ID_CTRL);
        assertThatThrownBy(() -> WireguardNetlink.familyId("jfl-no-such"))
                .isInstanceOfSatisfying(NetlinkException.class, e -> {
                    assertThat(e.errno()).isEqualTo(Errno.ENOENT);
                    assertThat(e.getMessage()).startsWith("CTRL_CMD_GETFAMILY jfl-no-such: ENOENT");
                });
    }

    @Test
    void aWireguardLinkAndTheFamilyExistTogetherOrNeither() throws Exception {
        t.ns.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                boolean created;
                try {
                    nl.createWireguard("wgt0");
                    created = true;
                } catch (NetlinkException e) {
                    assertThat(e.errno()).as(e.getMessage()).isEqualTo(Errno.EOPNOTSUPP);
                    assertThat(e.getMessage()).startsWith("RTM_NEWLINK wgt0 type wireguard: EOPNOTSUPP");
                    created = false;
                }
                assertThat(nl.link("wgt0").isPresent()).isEqualTo(created);
                if (created) {
                    try (WireguardNetlink wg = WireguardNetlink.open()) {
                        assertThat(wg.familyId()).isGreaterThan(WireguardGenl.GENL_ID_CTRL);
                        wg.setDevice("wgt0", new byte[32], 0, WireguardGenl.WGDEVICE_F_REPLACE_PEERS, java.util.List.of());
                    }
                    nl.deleteLink("wgt0");
                } else {
                    assertThatThrownBy(WireguardNetlink::open).isInstanceOfSatisfying(NetlinkException.class,
                            e -> assertThat(e.errno()).isEqualTo(Errno.ENOENT));
                }
            }
        });
    }
}
