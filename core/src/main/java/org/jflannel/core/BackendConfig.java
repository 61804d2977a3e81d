package org.jflannel.core;

/** The {@code Backend} object of net-conf.json, typed per supported backend. */
public sealed interface BackendConfig permits BackendConfig.Vxlan, BackendConfig.Udp, BackendConfig.HostGw,
        BackendConfig.Wireguard, BackendConfig.Alloc, BackendConfig.Extension,
        BackendConfig.Ipsec, BackendConfig.Ipip {

    /**
     * The backend type as flannel names it: {@code vxlan}, {@code udp}, {@code host-gw}, {@code wireguard},
     * {@code alloc} or {@code extension}.
     */
    String type();

    /**
     * VXLAN options (REFERENCE §2): {@code port} 0 means the kernel default 8472, {@code mtu} 0 means
     * the external interface's MTU.
     */
    record Vxlan(int vni, int port, int mtu, boolean gbp, boolean learning, boolean directRouting)
            implements BackendConfig {
        public static final int DEFAULT_VNI = 1;

        public Vxlan {
            if (vni < 0 || vni > 0xFFFFFF) {
                throw new IllegalArgumentException("VNI must be 0..16777215, got " + vni);
            }
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("Port must be 0..65535, got " + port);
            }
            if (mtu < 0) {
                throw new IllegalArgumentException("MTU must be >= 0, got " + mtu);
            }
        }

        @Override
        public String type() {
            return "vxlan";
        }
    }

    /** UDP options: the port to bind and to send to (default 8285). */
    record Udp(int port) implements BackendConfig {
        public static final int DEFAULT_PORT = 8285;

        public Udp {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("Port must be 1..65535, got " + port);
            }
        }

        @Override
        public String type() {
            return "udp";
        }
    }

    /** host-gw has no options (REFERENCE §2): routes via the peers' public IPs on the external interface. */
    record HostGw() implements BackendConfig {
        @Override
        public String type() {
            return "host-gw";
        }
    }

    /**
     * WireGuard options (REFERENCE §15, upstream {@code pkg/backend/wireguard}): {@code listenPort}
     * (51820) for the IPv4 device, {@code listenPortV6} (51821) for {@code flannel-wg-v6} in separate
     * mode, {@code mtu} 0 means the external interface's MTU, {@code psk} the decoded 32-byte
     * pre-shared key or null, {@code persistentKeepaliveSeconds} 0 means off.
     */
    record Wireguard(int listenPort, int listenPortV6, int mtu, byte[] psk, long persistentKeepaliveSeconds,
            WireguardMode mode) implements BackendConfig {
        public static final int DEFAULT_LISTEN_PORT = 51820;
        public static final int DEFAULT_LISTEN_PORT_V6 = 51821;

        public Wireguard {
            if (listenPort < 0 || listenPort > 65535) {
                throw new IllegalArgumentException("ListenPort must be 0..65535, got " + listenPort);
            }
            if (listenPortV6 < 0 || listenPortV6 > 65535) {
                throw new IllegalArgumentException("ListenPortV6 must be 0..65535, got " + listenPortV6);
            }
            if (mtu < 0) {
                throw new IllegalArgumentException("MTU must be >= 0, got " + mtu);
            }
            if (psk != null && psk.length != 32) {
                throw new IllegalArgumentException("PSK must be 32 bytes, got " + psk.length);
            }
            if (persistentKeepaliveSeconds < 0) {
                throw new IllegalArgumentException("PersistentKeepaliveInterval must be >= 0, got " + persistentKeepaliveSeconds);
            }
            java.util.Objects.requireNonNull(mode, "mode");
            psk = psk == null ? null : psk.clone();
        }

        /** A copy: the key is secret and records share their arrays. */
        @Override
        public byte[] psk() {
            return psk == null ? null : psk.clone();
        }

        @Override
        public String type() {
            return "wireguard";
        }

        /** Never prints the PSK. */
        @Override
        public String toString() {
            return "Wireguard[listenPort=" + listenPort + ", listenPortV6=" + listenPortV6 + ", mtu=" + mtu
                    + ", psk=" + (psk == null ? "none" : "set") + ", persistentKeepaliveSeconds="
                    + persistentKeepaliveSeconds + ", mode=" + mode + "]";
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Wireguard w && w.listenPort == listenPort && w.listenPortV6 == listenPortV6
                    && w.mtu == mtu && java.util.Arrays.equals(w.psk, psk)
                    && w.persistentKeepaliveSeconds == persistentKeepaliveSeconds && w.mode == mode;
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(listenPort, listenPortV6, mtu, java.util.Arrays.hashCode(psk),
                    persistentKeepaliveSeconds, mode);
        }
    }

    /**
     * upstream's {@code Mode}: {@code separate} (default) runs {@code flannel-wg} for IPv4 and
     * {@code flannel-wg-v6} for IPv6, each on its own port; the others run one device {@code flannel-wg}.
     */
    enum WireguardMode {
        SEPARATE("separate"), AUTO("auto"), IPV4("ipv4"), IPV6("ipv6");

        private final String text;

        WireguardMode(String text) {
            this.text = text;
        }

        /** As written in net-conf.json (case-sensitive, as upstream compares strings). */
        public String text() {
            return text;
        }

        public static java.util.Optional<WireguardMode> of(String text) {
            for (WireguardMode m : values()) {
                if (m.text.equals(text)) {
                    return java.util.Optional.of(m);
                }
            }
            return java.util.Optional.empty();
        }

        @Override
        public String toString() {
            return text;
        }
    }

    /**
     * ipip (upstream {@code pkg/backend/ipip}): its one option, {@code DirectRouting}: a peer on our own
     * subnet is routed directly via the external interface, as host-gw does, the others through the
     * {@code flannel.ipip} tunnel. IPv4 only ({@link NetConfParser} refuses IPv6).
     */
    record Ipip(boolean directRouting) implements BackendConfig {
        @Override
        public String type() {
            return "ipip";
        }
    }

    /** alloc has no options (REFERENCE §15): a lease and nothing else. */
    record Alloc() implements BackendConfig {
        @Override
        public String type() {
            return "alloc";
        }
    }

    /**
     * extension's commands (REFERENCE §15), each null or blank when not configured: run before the
     * lease (its output is the lease's backend data), after it, and per peer lease added or removed.
     */
    record Extension(String preStartupCommand, String postStartupCommand, String subnetAddCommand,
            String subnetRemoveCommand) implements BackendConfig {
        @Override
        public String type() {
            return "extension";
        }
    }

    /**
     * ipsec's options (REFERENCE §2): the IKE pre-shared key (upstream: at least 96 characters), UDP
     * encapsulation of ESP (NAT-T) forced or not, and the ESP proposal charon negotiates.
     */
    record Ipsec(String psk, boolean udpEncap, String espProposal) implements BackendConfig {
        public static final String DEFAULT_ESP_PROPOSAL = "aes128gcm16-sha256-prfsha256-ecp256";
        public static final int MIN_PSK_LENGTH = 96;

        public Ipsec {
            java.util.Objects.requireNonNull(psk, "psk");
            java.util.Objects.requireNonNull(espProposal, "espProposal");
        }

        @Override
        public String type() {
            return "ipsec";
        }

        /** The PSK is secret: never in a log line. */
        @Override
        public String toString() {
            return "Ipsec[psk=<" + psk.length() + " characters>, udpEncap=" + udpEncap + ", espProposal=" + espProposal + "]";
        }
    }
}
