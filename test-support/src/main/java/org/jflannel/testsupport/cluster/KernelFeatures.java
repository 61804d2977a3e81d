package org.jflannel.testsupport.cluster;

import java.util.Optional;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.linuxnet.netns.NetNs;

/**
 * What a backend needs of this machine's kernel, asked before the demo starts a cluster on it: ipip
 * needs the {@code ipip} module (IPv4-in-IPv4 tunnels). The question is put to the kernel itself, in a
 * throwaway network namespace: an ipip link is created there (the kernel loads the module when it can)
 * and the namespace deleted.
 */
public final class KernelFeatures {
    private KernelFeatures() {
    }

    /** Empty when the kernel can run {@code backend}; else what is missing, naming the kernel feature. */
    public static Optional<String> missingFor(String backend) throws Exception {
        if (!backend.equals("ipip")) {
            return Optional.empty();
        }
        try (NetNs ns = NetNs.create(org.jflannel.testsupport.netns.NetnsNames.unique("kfchk"))) {
            try {
                return ns.call(() -> {
                    try (RtNetlink nl = RtNetlink.open()) {
                        nl.createIpip("kfchk0", null);
                        return Optional.<String>empty();
                    } catch (NetlinkException e) {
                        if (e.errnoName().equals("EOPNOTSUPP")) {
                            return Optional.of("--backend ipip: this kernel has no IPv4-in-IPv4 tunnels (kernel module ipip, "
                                    + "CONFIG_NET_IPIP; try modprobe ipip): " + e.getMessage()
                                    + "; use vxlan, host-gw, udp or wireguard here, or run it in the kernel VM (tools/kernel-vm)");
                        }
                        throw e;
                    }
                });
            } finally {
                ns.delete();
            }
        }
    }
}
