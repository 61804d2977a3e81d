package org.jflannel.linuxnet.netlink;

import static org.jflannel.linuxnet.netlink.WireguardGenl.*;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code WG_CMD_GET_DEVICE} (include/uapi/linux/wireguard.h): the request, a dump (NLM_F_REQUEST | NLM_F_DUMP, the
 * only way the kernel takes it) naming the device by {@code WGDEVICE_A_IFNAME}, and the decoder of its multi-part
 * reply. The kernel (drivers/net/wireguard/netlink.c) puts the device's attributes in the first message only and
 * continues the peer list in a {@code WGDEVICE_A_PEERS} nest in each message; a peer whose allowed IPs do not fit
 * is split, the next message repeating its public key with the rest of them, so peers are merged by key (and a
 * message that repeats the device's attributes is taken as well). Unknown attributes (a newer kernel's, the
 * type-0 pads that align u64 values) are skipped. An attribute that runs past its message or nest, or a value of
 * the wrong size, is an {@link IllegalArgumentException} naming the attribute: a reply we misread must not become
 * numbers on a dashboard.
 */
final class WireguardDump {
    private static final int GENL_HEADER = 4;
    private static final int TYPE_MASK = 0x3fff; // strips NLA_F_NESTED and NLA_F_NET_BYTEORDER
    private static final String[] DEVICE = {"WGDEVICE_A_UNSPEC", "WGDEVICE_A_IFINDEX", "WGDEVICE_A_IFNAME",
        "WGDEVICE_A_PRIVATE_KEY", "WGDEVICE_A_PUBLIC_KEY", "WGDEVICE_A_FLAGS", "WGDEVICE_A_LISTEN_PORT", "WGDEVICE_A_FWMARK",
        "WGDEVICE_A_PEERS"};
    private static final String[] PEER = {"WGPEER_A_UNSPEC", "WGPEER_A_PUBLIC_KEY", "WGPEER_A_PRESHARED_KEY", "WGPEER_A_FLAGS",
        "WGPEER_A_ENDPOINT", "WGPEER_A_PERSISTENT_KEEPALIVE_INTERVAL", "WGPEER_A_LAST_HANDSHAKE_TIME", "WGPEER_A_RX_BYTES",
        "WGPEER_A_TX_BYTES", "WGPEER_A_ALLOWEDIPS", "WGPEER_A_PROTOCOL_VERSION"};
    private static final String[] ALLOWEDIP = {"WGALLOWEDIP_A_UNSPEC", "WGALLOWEDIP_A_FAMILY", "WGALLOWEDIP_A_IPADDR",
        "WGALLOWEDIP_A_CIDR_MASK"};

    /** One attribute's type and payload ({@code len} bytes at {@code at}). */
    private interface Visitor {
        void visit(int type, int at, int len);
    }

    private WireguardDump() {
    }

    /** The request for {@code ifname}, as a whole message (for the golden test). */
    static byte[] request(int familyId, int seq, String ifname) {
        NlWriter w = NlWriter.heap(64).begin(familyId, Rtnl.NLM_F_REQUEST | Rtnl.NLM_F_DUMP, seq);
        request(w, ifname);
        return w.finishBytes();
    }

    /** The request's body after a header of the family's type: genlmsghdr, then the device's name. */
    static void request(NlWriter w, String ifname) {
        w.u8(WG_CMD_GET_DEVICE).u8(WG_GENL_VERSION).u16(0);
        w.attrString(WGDEVICE_A_IFNAME, ifname);
    }

    /** The device in the dump's messages, each a buffer whose position..limit is one payload (genlmsghdr, attributes). */
    static WireguardDeviceState decode(List<ByteBuffer> messages) {
        Merge merge = new Merge();
        for (int i = 0; i < messages.size(); i++) {
            ByteBuffer b = messages.get(i).duplicate().order(ByteOrder.nativeOrder());
            String where = "message " + i;
            if (b.remaining() < GENL_HEADER) {
                throw malformed(where + ": " + b.remaining() + " bytes, shorter than a genlmsghdr");
            }
            walk(b, b.position() + GENL_HEADER, b.limit(), where, DEVICE, (type, at, len) -> merge.device(b, type, at, len, where));
        }
        return merge.result();
    }

    /** The attributes in {@code [from, to)}, each handed to {@code v}; one that runs past {@code to} is malformed. */
    private static void walk(ByteBuffer b, int from, int to, String where, String[] names, Visitor v) {
        int at = from;
        while (at < to) {
            if (to - at < 4) {
                throw malformed(where + ": " + (to - at) + " stray bytes after the last attribute");
            }
            int len = b.getShort(at) & 0xffff;
            int type = b.getShort(at + 2) & TYPE_MASK;
            if (len < 4 || at + len > to) {
                throw malformed(where + ": " + name(names, type) + " of length " + len + " runs past its end ("
                        + (to - at) + " bytes left)");
            }
            v.visit(type, at + 4, len - 4);
            at += (len + 3) & ~3;
        }
    }

    private static String name(String[] names, int type) {
        return type < names.length ? names[type] : "attribute " + type;
    }

    /**
     * 0 when the attribute's {@code len} is {@code want}, else malformed (naming the attribute): added to the
     * payload's offset, so a read states the size it needs where it reads.
     */
    private static int exact(String where, String[] names, int type, int len, int want) {
        if (len != want) {
            throw malformed(where + ": " + name(names, type) + " of " + len + " bytes, expected " + want);
        }
        return 0;
    }

    private static IllegalArgumentException malformed(String what) {
        return new IllegalArgumentException("malformed WG_CMD_GET_DEVICE reply: " + what);
    }

    private static String key(ByteBuffer b, int at) {
        byte[] k = new byte[32];
        b.get(at, k);
        return Base64.getEncoder().encodeToString(k);
    }

    /** struct sockaddr_in or sockaddr_in6 (family in host order, port in network order); null for another family. */
    private static InetSocketAddress sockaddr(ByteBuffer b, int at, int len, String where) {
        int family = len >= 2 ? b.getShort(at) & 0xffff : -1;
        int port = len >= 4 ? (b.get(at + 2) & 0xff) << 8 | (b.get(at + 3) & 0xff) : 0;
        if (family == AF_INET && len >= 8) {
            byte[] a = new byte[4];
            b.get(at + 4, a);
            return new InetSocketAddress(Inets.of(a), port);
        }
        if (family == AF_INET6 && len >= 28) {
            byte[] a = new byte[16];
            b.get(at + 8, a);
            int scope = b.getInt(at + 24);
            return new InetSocketAddress(scope == 0 ? Inets.of(a) : scoped(a, scope), port);
        }
        if (family == AF_INET || family == AF_INET6) {
            throw malformed(where + ": WGPEER_A_ENDPOINT of " + len + " bytes is too short for its family " + family);
        }
        return null;
    }

    /** An IPv6 address with its scope (a link-local endpoint). */
    private static InetAddress scoped(byte[] a, int scope) {
        try {
            return Inet6Address.getByAddress(null, a, scope);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // 16 bytes: cannot happen
        }
    }

    /** What one message says of a peer; a continuation has only the key and more allowed IPs. */
    private static final class PeerParts {
        String key;
        InetSocketAddress endpoint;
        Long lastHandshake;
        Long rx;
        Long tx;
        Integer keepalive;
        final List<IpPrefix> allowedIps = new ArrayList<>();

        void absorb(PeerParts later) {
            endpoint = later.endpoint != null ? later.endpoint : endpoint;
            lastHandshake = later.lastHandshake != null ? later.lastHandshake : lastHandshake;
            rx = later.rx != null ? later.rx : rx;
            tx = later.tx != null ? later.tx : tx;
            keepalive = later.keepalive != null ? later.keepalive : keepalive;
            allowedIps.addAll(later.allowedIps);
        }

        WireguardPeerState state() {
            return new WireguardPeerState(key, endpoint, lastHandshake == null ? WireguardPeerState.NEVER : lastHandshake,
                    rx == null ? 0 : rx, tx == null ? 0 : tx, keepalive == null ? 0 : keepalive, allowedIps);
        }
    }

    /** The device's attributes and its peers by key, in the kernel's order, over all messages. */
    private static final class Merge {
        String ifname;
        int ifindex;
        int listenPort;
        String publicKey;
        final Map<String, PeerParts> peers = new LinkedHashMap<>();

        void device(ByteBuffer b, int type, int at, int len, String where) {
            switch (type) {
                case WGDEVICE_A_IFINDEX -> ifindex = b.getInt(at + exact(where, DEVICE, type, len, 4));
                case WGDEVICE_A_IFNAME -> ifname = NlAttrs.cString(b, at, len);
                case WGDEVICE_A_PUBLIC_KEY -> publicKey = key(b, at + exact(where, DEVICE, type, len, 32));
                case WGDEVICE_A_LISTEN_PORT -> listenPort = b.getShort(at + exact(where, DEVICE, type, len, 2)) & 0xffff;
                case WGDEVICE_A_PEERS -> {
                    int[] n = {0};
                    walk(b, at, at + len, where + " WGDEVICE_A_PEERS", PEER, (t, a, l) -> peer(b, a, l, where + " peer " + n[0]++));
                }
                default -> { } // the private key (never copied out), fwmark, a newer kernel's attributes
            }
        }

        private void peer(ByteBuffer b, int from, int len, String where) {
            PeerParts p = new PeerParts();
            walk(b, from, from + len, where, PEER, (type, at, l) -> {
                switch (type) {
                    case WGPEER_A_PUBLIC_KEY -> p.key = key(b, at + exact(where, PEER, type, l, 32));
                    case WGPEER_A_ENDPOINT -> p.endpoint = sockaddr(b, at, l, where);
                    case WGPEER_A_PERSISTENT_KEEPALIVE_INTERVAL -> p.keepalive = b.getShort(at + exact(where, PEER, type, l, 2)) & 0xffff;
                    case WGPEER_A_LAST_HANDSHAKE_TIME -> { // struct __kernel_timespec: s64 seconds, s64 nanoseconds
                        int t = at + exact(where, PEER, type, l, 16);
                        p.lastHandshake = b.getLong(t) * 1_000_000_000L + b.getLong(t + 8);
                    }
                    case WGPEER_A_RX_BYTES -> p.rx = b.getLong(at + exact(where, PEER, type, l, 8));
                    case WGPEER_A_TX_BYTES -> p.tx = b.getLong(at + exact(where, PEER, type, l, 8));
                    case WGPEER_A_ALLOWEDIPS -> {
                        int[] n = {0};
                        walk(b, at, at + l, where + " WGPEER_A_ALLOWEDIPS", ALLOWEDIP,
                                (t, a, al) -> p.allowedIps.add(allowedIp(b, a, al, where + " allowed ip " + n[0]++)));
                    }
                    default -> { } // the preshared key (never copied out), flags, protocol version, pads, newer attributes
                }
            });
            if (p.key == null) {
                throw malformed(where + ": no WGPEER_A_PUBLIC_KEY");
            }
            PeerParts known = peers.get(p.key);
            if (known == null) {
                peers.put(p.key, p);
            } else {
                known.absorb(p);
            }
        }

        private static IpPrefix allowedIp(ByteBuffer b, int from, int len, String where) {
            int[] family = {-1};
            int[] cidr = {-1};
            byte[][] addr = {null};
            walk(b, from, from + len, where, ALLOWEDIP, (type, at, l) -> {
                switch (type) {
                    case WGALLOWEDIP_A_FAMILY -> family[0] = b.getShort(at + exact(where, ALLOWEDIP, type, l, 2)) & 0xffff;
                    case WGALLOWEDIP_A_CIDR_MASK -> cidr[0] = b.get(at + exact(where, ALLOWEDIP, type, l, 1)) & 0xff;
                    case WGALLOWEDIP_A_IPADDR -> {
                        addr[0] = new byte[l];
                        b.get(at, addr[0]);
                    }
                    default -> { }
                }
            });
            int want = family[0] == AF_INET ? 4 : family[0] == AF_INET6 ? 16 : -1;
            if (want < 0 || addr[0] == null || cidr[0] < 0) {
                throw malformed(where + ": needs WGALLOWEDIP_A_FAMILY (AF_INET or AF_INET6), WGALLOWEDIP_A_IPADDR and "
                        + "WGALLOWEDIP_A_CIDR_MASK, got family " + family[0]);
            }
            exact(where, ALLOWEDIP, WGALLOWEDIP_A_IPADDR, addr[0].length, want);
            if (cidr[0] > want * 8) { // named as the reply's fault, not IpPrefix's (NetlinkDecodeFuzzTest)
                throw malformed(where + ": WGALLOWEDIP_A_CIDR_MASK " + cidr[0] + " beyond " + want * 8);
            }
            return new IpPrefix(Inets.of(addr[0]), cidr[0]);
        }

        WireguardDeviceState result() {
            return new WireguardDeviceState(ifname, ifindex, listenPort, publicKey, peers.values().stream().map(PeerParts::state).toList());
        }
    }
}
