package org.jflannel.backend.ipsec;

import java.net.Inet4Address;
import java.util.List;
import org.jflannel.backend.ipsec.vici.ViciMessage;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.XfrmPolicy;

/**
 * Upstream's per-peer plan (ipsec_network.go, handle_charon.go, handle_xfrm.go), pure: the connection
 * {@code <ourPublicIP>-<ourSubnet>-<peerSubnet>-<peerPublicIP>} with one child {@code <ourSubnet>-<peerSubnet>},
 * and the policies out (ours → peer's), in and fwd (peer's → ours), each with one template: ESP in tunnel
 * mode between the public IPs, reqid 11, priority 0. IPv4 only, as upstream.
 */
public final class IpsecPlanner {
    public static final String TYPE = "ipsec";
    /** upstream's defaultReqID: ties the kernel policies to the SAs charon installs for the children. */
    public static final int REQID = 11;
    /** upstream's IKE proposal, fixed (only the ESP proposal is configurable). */
    public static final String IKE_PROPOSAL = "aes256-sha256-modp4096";

    private final Lease own;
    private final String espProposal;
    private final boolean udpEncap;

    public IpsecPlanner(Lease own, String espProposal, boolean udpEncap) {
        if (own.subnet() == null || own.attrs().publicIp() == null) {
            throw new IllegalArgumentException("ipsec needs an IPv4 lease with a public IPv4, got " + own);
        }
        this.own = own;
        this.espProposal = espProposal;
        this.udpEncap = udpEncap;
    }

    /** The plan for a peer lease; an IllegalArgumentException naming the lease when it has no IPv4 subnet or public IPv4. */
    public IpsecPeer plan(Lease peer) {
        Inet4Address peerIp = peer.attrs().publicIp();
        if (peer.subnet() == null || peerIp == null) {
            throw new IllegalArgumentException("lease " + peer.key() + " has no IPv4 subnet or public IPv4");
        }
        Inet4Address ourIp = own.attrs().publicIp();
        String ours = own.subnet().toString();
        String theirs = peer.subnet().toString();
        String connName = ourIp.getHostAddress() + "-" + ours + "-" + theirs + "-" + peerIp.getHostAddress();
        String childName = ours + "-" + theirs;
        ViciMessage child = ViciMessage.builder()
                .put("local_ts", List.of(ours))
                .put("remote_ts", List.of(theirs))
                .put("esp_proposals", List.of(espProposal))
                .put("start_action", "start")
                .put("close_action", "trap")
                .put("dpd_action", "restart")
                .put("mode", "tunnel")
                .put("reqid", Integer.toString(REQID))
                .put("rekey_time", "1h")
                .put("policies", "no") // ours to install, below
                .build();
        ViciMessage psk = ViciMessage.builder().put("auth", "psk").build();
        ViciMessage conn = ViciMessage.builder()
                .put("local_addrs", List.of(ourIp.getHostAddress()))
                .put("remote_addrs", List.of(peerIp.getHostAddress()))
                .put("proposals", List.of(IKE_PROPOSAL))
                .put("version", "2")
                .put("encap", Boolean.toString(udpEncap)) // upstream: strconv.FormatBool; charon reads true/false
                .put("keyingtries", "0") // retry forever
                .put("local", psk)
                .put("remote", psk)
                .put("children", ViciMessage.builder().put(childName, child).build())
                .build();
        IpPrefix ourNet = prefix(own.subnet());
        IpPrefix peerNet = prefix(peer.subnet());
        List<XfrmPolicy> policies = List.of(
                new XfrmPolicy(ourNet, peerNet, XfrmPolicy.Dir.OUT, 0, List.of(XfrmPolicy.Tmpl.espTunnel(ourIp, peerIp, REQID))),
                new XfrmPolicy(peerNet, ourNet, XfrmPolicy.Dir.IN, 0, List.of(XfrmPolicy.Tmpl.espTunnel(peerIp, ourIp, REQID))),
                new XfrmPolicy(peerNet, ourNet, XfrmPolicy.Dir.FWD, 0, List.of(XfrmPolicy.Tmpl.espTunnel(peerIp, ourIp, REQID))));
        return new IpsecPeer(peerIp.getHostAddress(), connName, conn, policies);
    }

    private static IpPrefix prefix(Ip4Net net) {
        return new IpPrefix(net.inetAddress(), net.prefixLength());
    }

    /**
     * upstream's MTU: the external interface's minus 77 (outer IP header 20, ESP SPI 4 and sequence 4,
     * AES IV 16, padding up to 15, pad length 1, next header 1, ICV 16), minus 8 more with UDP encapsulation.
     */
    public static int mtu(int externalMtu, boolean udpEncap) {
        return externalMtu - 77 - (udpEncap ? 8 : 0);
    }
}
