package org.jflannel.linuxnet.netlink;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.List;

/**
 * Requests to the kernel's WireGuard generic netlink family (include/uapi/linux/wireguard.h), as
 * upstream flannel configures {@code flannel-wg} through wgctrl where the module exists: the family
 * lookup ({@code CTRL_CMD_GETFAMILY "wireguard"}) and {@code WG_CMD_SET_DEVICE} with the private
 * key, listen port and peers (public key, PSK, endpoint, keepalive, allowed IPs). The encoding,
 * tested against bytes derived by hand from the UAPI header; {@link WireguardNetlink} sends it.
 * {@code WG_CMD_GET_DEVICE}'s request and reply are {@link WireguardDump}'s.
 */
public final class WireguardGenl {
    static final int GENL_ID_CTRL = 0x10;
    static final int CTRL_CMD_GETFAMILY = 3;
    static final int CTRL_ATTR_FAMILY_NAME = 2;
    public static final String FAMILY = "wireguard";
    static final int WG_GENL_VERSION = 1;
    static final int WG_CMD_GET_DEVICE = 0;
    static final int WG_CMD_SET_DEVICE = 1;
    static final int WGDEVICE_A_IFINDEX = 1;
    static final int WGDEVICE_A_IFNAME = 2;
    static final int WGDEVICE_A_PRIVATE_KEY = 3;
    static final int WGDEVICE_A_PUBLIC_KEY = 4;
    static final int WGDEVICE_A_FLAGS = 5;
    static final int WGDEVICE_A_LISTEN_PORT = 6;
    static final int WGDEVICE_A_FWMARK = 7;
    static final int WGDEVICE_A_PEERS = 8;
    public static final int WGDEVICE_F_REPLACE_PEERS = 1;
    static final int WGPEER_A_PUBLIC_KEY = 1;
    static final int WGPEER_A_PRESHARED_KEY = 2;
    static final int WGPEER_A_FLAGS = 3;
    static final int WGPEER_A_ENDPOINT = 4;
    static final int WGPEER_A_PERSISTENT_KEEPALIVE_INTERVAL = 5;
    static final int WGPEER_A_LAST_HANDSHAKE_TIME = 6;
    static final int WGPEER_A_RX_BYTES = 7;
    static final int WGPEER_A_TX_BYTES = 8;
    static final int WGPEER_A_ALLOWEDIPS = 9;
    static final int WGPEER_A_PROTOCOL_VERSION = 10;
    public static final int WGPEER_F_REMOVE_ME = 1;
    public static final int WGPEER_F_REPLACE_ALLOWEDIPS = 2;
    static final int WGALLOWEDIP_A_FAMILY = 1;
    static final int WGALLOWEDIP_A_IPADDR = 2;
    static final int WGALLOWEDIP_A_CIDR_MASK = 3;
    static final int NLA_F_NESTED = 0x8000;
    static final int REQUEST_ACK = 0x5; // NLM_F_REQUEST | NLM_F_ACK
    static final int CTRL_ATTR_FAMILY_ID = 1;
    static final int AF_INET = 2;
    static final int AF_INET6 = 10;

    /**
     * One peer of a {@code WG_CMD_SET_DEVICE}: {@code psk} null to leave it as it is, {@code endpoint}
     * (IPv4 or IPv6) null to leave it.
     */
    public record PeerSpec(byte[] publicKey, byte[] psk, InetAddress endpoint, int port, int keepaliveSeconds,
            List<IpPrefix> allowedIps, int flags) {
        public PeerSpec {
            if (publicKey == null || publicKey.length != 32) {
                throw new IllegalArgumentException("wireguard peer public key: expected 32 bytes");
            }
            if (psk != null && psk.length != 32) {
                throw new IllegalArgumentException("wireguard peer preshared key: expected 32 bytes");
            }
            if (keepaliveSeconds < 0 || keepaliveSeconds > 65535) {
                throw new IllegalArgumentException("wireguard persistent keepalive: expected 0..65535, got " + keepaliveSeconds);
            }
            allowedIps = List.copyOf(allowedIps);
        }
    }

    private WireguardGenl() {
    }

    /** CTRL_CMD_GETFAMILY for "wireguard" (the reply's CTRL_ATTR_FAMILY_ID is the type of the requests below). */
    static byte[] getFamily(int seq) {
        NlWriter w = NlWriter.heap(64).begin(GENL_ID_CTRL, REQUEST_ACK, seq);
        getFamily(w, FAMILY);
        return w.finishBytes();
    }

    /** The body of CTRL_CMD_GETFAMILY for {@code name}, after a header of type {@link #GENL_ID_CTRL}. */
    static void getFamily(NlWriter w, String name) {
        w.u8(CTRL_CMD_GETFAMILY).u8(1).u16(0);
        w.attrString(CTRL_ATTR_FAMILY_NAME, name);
    }

    /**
     * WG_CMD_SET_DEVICE on {@code ifname}: private key and listen port when given (null / 0: left
     * as they are), {@code flags} (e.g. {@link #WGDEVICE_F_REPLACE_PEERS}), then the peers.
     */
    static byte[] setDevice(int familyId, int seq, String ifname, byte[] privateKey, int listenPort, int flags,
            List<PeerSpec> peers) {
        NlWriter w = NlWriter.heap(256 + 256 * peers.size()).begin(familyId, REQUEST_ACK, seq);
        setDevice(w, ifname, privateKey, listenPort, flags, peers);
        return w.finishBytes();
    }

    /** The body of {@link #setDevice(int, int, String, byte[], int, int, List)} after a header of the family's type. */
    static void setDevice(NlWriter w, String ifname, byte[] privateKey, int listenPort, int flags, List<PeerSpec> peers) {
        w.u8(WG_CMD_SET_DEVICE).u8(WG_GENL_VERSION).u16(0);
        w.attrString(WGDEVICE_A_IFNAME, ifname);
        if (privateKey != null) {
            w.attr(WGDEVICE_A_PRIVATE_KEY, privateKey);
        }
        if (listenPort > 0) {
            w.attrU16(WGDEVICE_A_LISTEN_PORT, listenPort);
        }
        if (flags != 0) {
            w.attrU32(WGDEVICE_A_FLAGS, flags);
        }
        if (!peers.isEmpty()) {
            int all = w.nest(WGDEVICE_A_PEERS | NLA_F_NESTED);
            for (PeerSpec p : peers) {
                int one = w.nest(NLA_F_NESTED); // array element: type 0, as wg(8) and wgctrl write it
                w.attr(WGPEER_A_PUBLIC_KEY, p.publicKey());
                if (p.flags() != 0) {
                    w.attrU32(WGPEER_A_FLAGS, p.flags());
                }
                if (p.psk() != null) {
                    w.attr(WGPEER_A_PRESHARED_KEY, p.psk());
                }
                if (p.endpoint() != null) {
                    w.attr(WGPEER_A_ENDPOINT, sockaddr(p.endpoint(), p.port()));
                }
                if ((p.flags() & WGPEER_F_REMOVE_ME) == 0) {
                    w.attrU16(WGPEER_A_PERSISTENT_KEEPALIVE_INTERVAL, p.keepaliveSeconds()); // 0 turns it off
                }
                if (!p.allowedIps().isEmpty()) {
                    int ips = w.nest(WGPEER_A_ALLOWEDIPS | NLA_F_NESTED);
                    for (IpPrefix a : p.allowedIps()) {
                        int ip = w.nest(NLA_F_NESTED);
                        byte[] addr = a.address().getAddress();
                        w.attrU16(WGALLOWEDIP_A_FAMILY, addr.length == 4 ? AF_INET : AF_INET6);
                        w.attr(WGALLOWEDIP_A_IPADDR, addr);
                        w.attrU8(WGALLOWEDIP_A_CIDR_MASK, a.prefixLength());
                        w.end(ip);
                    }
                    w.end(ips);
                }
                w.end(one);
            }
            w.end(all);
        }
    }

    /** A peer's bytes in a request, at most (key, flags, PSK, endpoint, keepalive and the nests), without its allowed IPs. */
    static int peerSize(PeerSpec p) {
        return 4 + 36 + 8 + 36 + 32 + 8 + 4 + 40 * p.allowedIps().size();
    }

    /** sockaddr_in or sockaddr_in6, as the kernel takes a peer's endpoint. */
    static byte[] sockaddr(InetAddress a, int port) {
        return a instanceof Inet6Address v6 ? sockaddrIn6(v6, port) : sockaddrIn((Inet4Address) a, port);
    }

    /** struct sockaddr_in6: family (host order), port (network order), flow info 0, address, scope id 0. */
    static byte[] sockaddrIn6(Inet6Address a, int port) {
        byte[] s = new byte[28];
        s[0] = AF_INET6;
        s[2] = (byte) (port >>> 8);
        s[3] = (byte) port;
        System.arraycopy(a.getAddress(), 0, s, 8, 16);
        return s;
    }

    /** struct sockaddr_in: family (host order), port (network order), address, 8 zero bytes. */
    static byte[] sockaddrIn(Inet4Address a, int port) {
        byte[] s = new byte[16];
        s[0] = AF_INET;
        s[2] = (byte) (port >>> 8);
        s[3] = (byte) port;
        System.arraycopy(a.getAddress(), 0, s, 4, 4);
        return s;
    }
}
