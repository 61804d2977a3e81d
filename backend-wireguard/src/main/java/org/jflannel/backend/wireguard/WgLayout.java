package org.jflannel.backend.wireguard;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.ConfigException;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.NetConf;

/**
 * Which WireGuard devices a net-conf.json asks for (upstream's {@code RegisterNetwork}), before any is
 * made: {@code separate} gives {@code flannel-wg} (IPv4 endpoints, ListenPort, the IPv4 Network) and
 * {@code flannel-wg-v6} (IPv6 endpoints, ListenPortV6, the IPv6Network), each only when its family is
 * enabled; {@code ipv4}, {@code ipv6} and {@code auto} give one {@code flannel-wg} on ListenPort that
 * routes every enabled family, its endpoints IPv4, IPv6, or either (then the socket is bound to
 * {@code ::} and takes both). Checked here, so a bad combination names its field before a device exists.
 */
record WgLayout(BackendConfig.WireguardMode mode, List<Spec> devices) {

    /** One device: its name, UDP port, the local address its socket binds, the families it routes. */
    record Spec(String name, int port, InetAddress bind, boolean routesIpv4, boolean routesIpv6) {
    }

    WgLayout {
        devices = List.copyOf(devices);
    }

    static WgLayout of(NetConf conf, BackendConfig.Wireguard cfg, ExternalInterface ext) throws ConfigException {
        boolean v4 = conf.enableIPv4();
        boolean v6 = conf.enableIPv6();
        if (v4 && conf.network() == null) {
            throw new ConfigException("Network", "the wireguard backend needs an IPv4 Network when EnableIPv4 is true");
        }
        if (v6 && conf.ipv6Network() == null) {
            throw new ConfigException("IPv6Network", "the wireguard backend needs an IPv6Network when EnableIPv6 is true");
        }
        if (v4 && ext.address() == null) {
            throw new ConfigException("EnableIPv4", "interface " + ext.name() + " has no IPv4 address");
        }
        if (v6 && ext.address6() == null) {
            throw new ConfigException("EnableIPv6", "interface " + ext.name() + " has no IPv6 address");
        }
        List<Spec> specs = new ArrayList<>();
        switch (cfg.mode()) {
            case SEPARATE -> {
                if (v4) {
                    specs.add(new Spec(WireguardBackend.DEVICE, cfg.listenPort(), ext.address(), true, false));
                }
                if (v6) {
                    specs.add(new Spec(WireguardBackend.DEVICE_V6, cfg.listenPortV6(), ext.address6(), false, true));
                }
            }
            case IPV4 -> {
                if (ext.address() == null) {
                    throw new ConfigException("Backend.Mode", "Mode ipv4 needs an IPv4 address on interface " + ext.name()
                            + " (its endpoints are IPv4)");
                }
                specs.add(new Spec(WireguardBackend.DEVICE, cfg.listenPort(), ext.address(), v4, v6));
            }
            case IPV6 -> {
                if (ext.address6() == null) {
                    throw new ConfigException("Backend.Mode", "Mode ipv6 needs an IPv6 address on interface " + ext.name()
                            + " (its endpoints are IPv6)");
                }
                specs.add(new Spec(WireguardBackend.DEVICE, cfg.listenPort(), ext.address6(), v4, v6));
            }
            case AUTO -> {
                // both families only when IPv6 is on: a v4-only network keeps binding its IPv4 address
                InetAddress bind = ext.address() == null ? ext.address6()
                        : ext.address6() != null && v6 ? anyV6() : ext.address();
                specs.add(new Spec(WireguardBackend.DEVICE, cfg.listenPort(), bind, v4, v6));
            }
            default -> throw new ConfigException("Backend.Mode", "no valid Mode configured");
        }
        return new WgLayout(cfg.mode(), specs);
    }

    /** {@code ::}: a dual-stack socket, IPv4 peers as {@code ::ffff:a.b.c.d}. */
    private static InetAddress anyV6() {
        try {
            return InetAddress.getByAddress(new byte[16]);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /** True when the one device's socket reaches IPv6 endpoints (auto mode may pick them). */
    boolean ipv6Endpoints() {
        return devices.stream().anyMatch(d -> d.bind() instanceof java.net.Inet6Address);
    }

    /** True when the one device's socket reaches IPv4 endpoints. */
    boolean ipv4Endpoints() {
        return devices.stream().anyMatch(d -> d.bind() instanceof java.net.Inet4Address || d.bind().isAnyLocalAddress());
    }

    /** The port our IPv4 endpoint listens on (what BackendData's Port says). */
    int portV4() {
        return devices.get(0).port();
    }

    /** The port our IPv6 endpoint listens on (what BackendV6Data's Port says): flannel-wg-v6's in separate mode. */
    int portV6() {
        return devices.get(devices.size() - 1).port();
    }
}
