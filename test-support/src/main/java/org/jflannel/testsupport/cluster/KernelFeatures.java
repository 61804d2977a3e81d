package org.jflannel.testsupport.cluster;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.List;
import java.util.Optional;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.linuxnet.netns.NetNs;

/**
 * What a backend needs of this machine's kernel, asked before the demo starts a cluster on it: ipip
 * needs the {@code ipip} module (IPv4-in-IPv4 tunnels), ipsec charon and the kernel's ESP with AES-GCM. The
 * question is put to the kernel itself, in a throwaway network namespace: an ipip link, or an ESP state, is
 * created there (the kernel loads the module when it can) and the namespace deleted.
 */
public final class KernelFeatures {
    private KernelFeatures() {
    }

    /** Empty when the kernel can run {@code backend}; else what is missing, naming the kernel feature. */
    public static Optional<String> missingFor(String backend) throws Exception {
        if (backend.equals("ipsec")) {
            return missingForIpsec();
        }
        if (!backend.equals("ipip")) {
            return Optional.empty();
        }
        try (NetNs ns = NetNs.create(org.jflannel.testsupport.netns.NetnsNames.unique("kfchk"))) {
            try {
                return ns.call(() -> {
                    try (RtNetlink nl = RtNetlink.open()) {
                        // a local address of its own: the module's fallback device tunl0 (local any, remote any) is made
                        // in every namespace, and a second tunnel with tunl0's endpoints is refused with EEXIST
                        nl.createIpip("kfchk0", (Inet4Address) InetAddress.getByName("192.0.2.254"));
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

    /** Where upstream's ipsec backend looks for charon (and ours: docs/ipsec.md), after PATH. */
    static final List<String> CHARON_PATHS = List.of("/usr/lib/strongswan/charon", "/usr/lib/ipsec/charon",
            "/usr/libexec/strongswan/charon", "/usr/libexec/ipsec/charon");

    /**
     * ipsec needs strongSwan's charon (bin/setup installs Debian's) and the kernel's ESP with AES-GCM (the default
     * proposal's): an ESP state is added in a throwaway namespace, as charon would add one (iproute2's
     * {@code ip xfrm state add}); the kernel refuses it without {@code esp4} (CONFIG_INET_ESP).
     */
    private static Optional<String> missingForIpsec() throws Exception {
        boolean onPath = java.util.Arrays.stream(System.getenv().getOrDefault("PATH", "").split(":"))
                .anyMatch(d -> !d.isEmpty() && java.nio.file.Files.isExecutable(java.nio.file.Path.of(d, "charon")));
        if (!onPath && CHARON_PATHS.stream().noneMatch(p -> java.nio.file.Files.isExecutable(java.nio.file.Path.of(p)))) {
            return Optional.of("--backend ipsec: no charon found on PATH or at " + CHARON_PATHS
                    + " (strongSwan's IKE daemon: bin/setup installs Debian's strongswan-charon)");
        }
        String ns = org.jflannel.testsupport.netns.NetnsNames.unique("kfesp");
        try (NetNs n = NetNs.create(ns)) {
            try {
                Cmd.Result r = Cmd.run(java.time.Duration.ofSeconds(30), List.of("ip", "-n", ns, "xfrm", "state", "add",
                        "src", "192.0.2.1", "dst", "192.0.2.2", "proto", "esp", "spi", "0x100", "reqid", "11", "mode", "tunnel",
                        "aead", "rfc4106(gcm(aes))", "0x0102030405060708090a0b0c0d0e0f1011121314", "128"));
                if (r.exitCode() != 0) {
                    return Optional.of("--backend ipsec: this kernel has no ESP with AES-GCM (kernel modules esp4 and"
                            + " xfrm4_tunnel, CONFIG_INET_ESP; try modprobe esp4): ip xfrm state add: "
                            + r.stderr().strip() + "; use vxlan, host-gw, udp or wireguard here, or run it in the kernel VM"
                            + " (tools/kernel-vm)");
                }
                return Optional.empty();
            } finally {
                n.delete();
            }
        }
    }
}
