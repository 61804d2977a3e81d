package org.jflannel.core;

/** The {@code Backend} object of net-conf.json, typed per supported backend. */
public sealed interface BackendConfig
        permits BackendConfig.Vxlan, BackendConfig.Udp, BackendConfig.HostGw, BackendConfig.Alloc, BackendConfig.Extension {

    /** The backend type as flannel names it: {@code vxlan}, {@code udp}, {@code host-gw}, {@code alloc} or {@code extension}. */
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
}
