package org.jflannel.backend.wireguard;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jflannel.backend.wireguard.protocol.AllowedIp;
import org.jflannel.backend.wireguard.protocol.Device;
import org.jflannel.backend.wireguard.protocol.Endpoint;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.Lease;
import org.jflannel.core.peers.Devices;
import org.jflannel.core.peers.LeasePlan;
import org.jflannel.core.peers.PeerKernel;
import org.jflannel.core.peers.PeerLoop;
import org.jflannel.core.peers.ReadBack;
import org.jflannel.core.peers.Writing;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wireguard backend's side of the shared {@link PeerLoop}: the devices' peer tables ({@link PeerTable}:
 * our userspace {@link Device}s, or the kernel's devices in kernel mode; upstream's {@code handleSubnetEvents}). A wireguard lease wants, by mode:
 * <ul>
 *   <li>{@code separate}: on {@code flannel-wg} the key of its BackendData, endpoint {@code PublicIP:Port},
 *       allowed IPs its IPv4 subnet; on {@code flannel-wg-v6} the key of its BackendV6Data, endpoint
 *       {@code [PublicIPv6]:Port}, allowed IPs its IPv6 subnet (each when both sides have the family);</li>
 *   <li>{@code ipv4}, {@code ipv6}, {@code auto}: one peer on {@code flannel-wg} whose allowed IPs are all its
 *       subnets of the families we route, the key of its BackendV6Data when it has IPv6 (upstream's order),
 *       else of its BackendData; the endpoint IPv4, IPv6, or in auto mode upstream's choice
 *       ({@link #select}).</li>
 * </ul>
 * The port is the one the lease's data names, else ours (ListenPort; ListenPortV6 for flannel-wg-v6),
 * as upstream, which ignores it. Our PSK and keepalive. A peer whose key stays the same is updated in
 * place (its sessions kept, as {@code wg set} does); a new key replaces the peer (node restarted
 * without its key file); a removed lease takes its peers away (sessions wiped, traffic dropped from
 * then on). Each reconcile reads the tables back ({@link #readBack}): a peer a device lost is set again, and
 * after the first complete lease list a peer no lease wants goes (kernel mode: a device adopted from a killed
 * run, or one an operator's {@code wg} changed).
 */
final class WireguardPeers implements PeerKernel<WgPeer> {
    private static final Logger LOG = LoggerFactory.getLogger(WireguardPeers.class);
    static final String TYPE = "wireguard";

    private final Map<String, PeerTable> devices;
    private final WgLayout layout;
    private final BackendConfig.Wireguard cfg;
    private final Inet4Address ownV4;
    private final Inet6Address ownV6;
    /**
     * Peers left as they were when their lease's data turned unusable (upstream's way), by lease key: still wanted
     * (never strays), and removed with their lease ({@link #forgotten}) or given up when its data is usable again.
     */
    private final Map<String, List<WgPeer>> retained = new HashMap<>();
    /** The lease {@link #plan} last planned: the loop retires a skipped lease's peers right after planning it. */
    private String planning;

    /**
     * @param devices by name, one per entry of {@code layout}
     * @param ownV4   our public IPv4 (auto mode's choice), or null
     * @param ownV6   our public IPv6 (auto mode's choice), or null
     */
    WireguardPeers(Map<String, PeerTable> devices, WgLayout layout, BackendConfig.Wireguard cfg, Inet4Address ownV4,
            Inet6Address ownV6) {
        this.devices = Map.copyOf(devices);
        this.layout = layout;
        this.cfg = cfg;
        this.ownV4 = ownV4;
        this.ownV6 = ownV6;
    }

    @Override
    public LeasePlan<WgPeer> plan(Lease lease) {
        if (!TYPE.equals(lease.attrs().backendType())) {
            return LeasePlan.ignored("wireguard ignoring lease of another backend type=" + lease.attrs().backendType());
        }
        planning = lease.key();
        List<WgPeer> rows = rows(lease);
        if (!rows.isEmpty()) {
            // usable again: its peers are programmed now; a retained one under a key it no longer names is a stray
            retained.remove(lease.key());
        }
        if (rows.isEmpty()) {
            return LeasePlan.skipped("wireguard lease without a usable PublicKey, subnet or public address of our families data="
                    + lease.attrs().backendData() + " v6Data=" + lease.attrs().backendV6Data());
        }
        return LeasePlan.of(lease, rows);
    }

    /** The rows a wireguard lease asks for (none when its data or addresses are unusable). */
    List<WgPeer> rows(Lease l) {
        boolean v4 = routes(true) && l.subnet() != null;
        boolean v6 = routes(false) && l.ipv6Subnet() != null;
        Optional<WireguardLeaseData> d4 = WireguardLeaseData.parse(l.attrs().backendData());
        Optional<WireguardLeaseData> d6 = WireguardLeaseData.parse(l.attrs().backendV6Data());
        int keepalive = (int) cfg.persistentKeepaliveSeconds();
        List<WgPeer> rows = new ArrayList<>();
        if (layout.mode() == BackendConfig.WireguardMode.SEPARATE) {
            if (v4 && d4.isPresent() && l.attrs().publicIp() != null) {
                rows.add(new WgPeer(WireguardBackend.DEVICE, key(d4.get()), Endpoint.of(l.attrs().publicIp(), port(d4.get(), cfg.listenPort())),
                        List.of(v4(l)), keepalive));
            }
            if (v6 && d6.isPresent() && l.attrs().publicIpv6() != null) {
                rows.add(new WgPeer(WireguardBackend.DEVICE_V6, key(d6.get()),
                        Endpoint.of(l.attrs().publicIpv6(), port(d6.get(), cfg.listenPortV6())), List.of(v6(l)), keepalive));
            }
            return rows;
        }
        Optional<WireguardLeaseData> data = v6 && d6.isPresent() ? d6 : d4.isPresent() ? d4 : d6;
        Optional<InetAddress> at = switch (layout.mode()) {
            case IPV4 -> Optional.ofNullable(l.attrs().publicIp());
            case IPV6 -> Optional.ofNullable(l.attrs().publicIpv6());
            default -> select(layout.ipv4Endpoints() ? l.attrs().publicIp() : null,
                    layout.ipv6Endpoints() ? l.attrs().publicIpv6() : null);
        };
        if (data.isEmpty() || at.isEmpty() || !(v4 || v6)) {
            return rows;
        }
        boolean v6Endpoint = at.get() instanceof Inet6Address;
        int port = port((v6Endpoint ? d6 : d4).orElse(data.get()), cfg.listenPort());
        List<AllowedIp> allowed = new ArrayList<>();
        if (v4) {
            allowed.add(v4(l));
        }
        if (v6) {
            allowed.add(v6(l));
        }
        rows.add(new WgPeer(WireguardBackend.DEVICE, key(data.get()), Endpoint.of(at.get(), port), allowed, keepalive));
        return rows;
    }

    /**
     * Auto mode's endpoint (upstream's {@code selectPublicEndpoint}): the one family the peer has; with
     * both, IPv4 when its IPv4 is public (not RFC 1918) and we have IPv4, else IPv6 when its IPv6 and ours
     * are public (not RFC 4193 {@code fc00::/7}), else IPv4.
     */
    Optional<InetAddress> select(Inet4Address ip4, Inet6Address ip6) {
        if (ip4 == null || ip6 == null) {
            return Optional.ofNullable(ip4 == null ? ip6 : ip4);
        }
        if (!ip4.isSiteLocalAddress() && ownV4 != null) {
            return Optional.of(ip4);
        }
        if (!uniqueLocal(ip6) && ownV6 != null && !uniqueLocal(ownV6)) {
            return Optional.of(ip6);
        }
        return Optional.of(ip4);
    }

    private static boolean uniqueLocal(Inet6Address a) {
        return (a.getAddress()[0] & 0xfe) == 0xfc;
    }

    private boolean routes(boolean ipv4) {
        return layout.devices().stream().anyMatch(d -> ipv4 ? d.routesIpv4() : d.routesIpv6());
    }

    private static String key(WireguardLeaseData d) {
        return Base64.getEncoder().encodeToString(d.publicKey());
    }

    private static int port(WireguardLeaseData d, int ours) {
        return d.port() > 0 ? d.port() : ours;
    }

    private static AllowedIp v4(Lease l) {
        return new AllowedIp(l.subnet().address(), l.subnet().prefixLength());
    }

    private static AllowedIp v6(Lease l) {
        return AllowedIp.v6(l.ipv6Subnet().high(), l.ipv6Subnet().low(), l.ipv6Subnet().prefixLength());
    }

    /** A removal of a lease we hold no row for: the key its data names goes all the same. */
    @Override
    public List<WgPeer> forgotten(Lease lease) {
        List<WgPeer> out = new ArrayList<>(TYPE.equals(lease.attrs().backendType()) ? rows(lease) : List.of());
        for (WgPeer kept : retained.getOrDefault(lease.key(), List.of())) {
            if (!out.contains(kept)) {
                out.add(kept); // the peer its unusable data left in place goes with the lease
            }
        }
        retained.remove(lease.key());
        return out;
    }

    @Override
    public String describe(WgPeer p) {
        return "dev=" + p.device() + " publicKey=" + p.publicKey() + " endpoint=" + p.endpoint() + " allowedIps=" + p.allowedIps()
                + " keepalive=" + p.keepaliveSeconds();
    }

    /** Each peer set on the device; a key the device refuses (small order), or a request the kernel refuses, is logged and stays out. */
    @Override
    public List<WgPeer> write(List<WgPeer> entries, Writing<WgPeer> how) {
        List<WgPeer> failed = new ArrayList<>();
        for (WgPeer p : entries) {
            if (!set(p, how.failing().contains(p))) {
                failed.add(p);
            }
        }
        return failed;
    }

    private boolean set(WgPeer p, boolean failedBefore) {
        try {
            devices.get(p.device()).setPeer(p.key(), cfg.psk(), p.endpoint(), p.allowedIps(), p.keepaliveSeconds());
            return true;
        } catch (IllegalArgumentException | IOException ex) {
            if (failedBefore) {
                LOG.debug("wireguard peer refused again dev={} publicKey={} error={}", p.device(), p.publicKey(), ex.getMessage());
            } else {
                LOG.warn("wireguard peer refused dev={} publicKey={} error={}", p.device(), p.publicKey(), ex.getMessage());
            }
            return false;
        }
    }

    /** The devices are made once at start and never checked: a vanished kernel device is not re-created. */
    @Override
    public Devices devices() {
        return Devices.READY;
    }

    /**
     * The devices' peers read back, by key (kernel mode: one {@code WG_CMD_GET_DEVICE} dump per device; userspace: our
     * own table): a wanted peer the device lacks is missing (in kernel mode someone may have run {@code wg set … remove});
     * once the first complete lease list is in, a peer no lease wants is a stray and goes, with a line saying so — the
     * peers of nodes that left while a SIGKILLed daemon was down, on the leftover device the next run adopted
     * ({@link KernelDevice}). A peer kept when its lease's data turned unusable stays wanted until that lease goes.
     * Endpoints and allowed IPs are not compared: every write replaces them.
     */
    @Override
    public ReadBack<WgPeer> readBack(Collection<WgPeer> desired, boolean withStrays) throws IOException {
        List<ReadBack.Missing<WgPeer>> missing = new ArrayList<>();
        List<Runnable> strays = new ArrayList<>();
        for (Map.Entry<String, PeerTable> device : devices.entrySet()) {
            Set<String> present = new HashSet<>();
            for (PeerStats s : device.getValue().stats()) {
                present.add(s.publicKey());
            }
            Set<String> wanted = new HashSet<>();
            retained.values().forEach(kept -> kept.stream().filter(p -> p.device().equals(device.getKey()))
                    .forEach(p -> wanted.add(p.publicKey())));
            for (WgPeer p : desired) {
                if (p.device().equals(device.getKey())) {
                    wanted.add(p.publicKey());
                    if (!present.contains(p.publicKey())) {
                        missing.add(new ReadBack.Missing<>(p, 1));
                    }
                }
            }
            if (withStrays) {
                present.stream().filter(key -> !wanted.contains(key)).sorted()
                        .forEach(key -> strays.add(() -> removeStray(device.getKey(), device.getValue(), key)));
            }
        }
        return new ReadBack<>(missing, strays, 0);
    }

    private static void removeStray(String device, PeerTable table, String publicKey) {
        try {
            table.removePeer(Base64.getDecoder().decode(publicKey));
            LOG.info("wireguard peer stray removed dev={} publicKey={} (no lease wants it)", device, publicKey);
        } catch (IOException e) {
            LOG.warn("wireguard peer stray removal failed dev={} publicKey={} error={}", device, publicKey, e.getMessage());
        }
    }

    /**
     * A changed lease under the same key: the device updates the peer (endpoint, allowed IPs) and keeps its
     * sessions. A lease that turned unusable leaves its peer as it was (upstream's too: it logs and goes on).
     */
    @Override
    public boolean keepsOnChange(WgPeer stale, List<WgPeer> next) {
        if (next.isEmpty()) {
            if (planning != null) {
                retained.computeIfAbsent(planning, k -> new ArrayList<>()).add(stale);
            }
            return true;
        }
        return next.stream().anyMatch(p -> p.publicKey().equals(stale.publicKey()) && p.device().equals(stale.device()));
    }

    /** A peer the device lacks, set again (a line when it works, as the other backends' repairs). */
    @Override
    public boolean repair(ReadBack.Missing<WgPeer> missing, boolean failedBefore) {
        WgPeer p = missing.entry();
        boolean ok = set(p, failedBefore);
        if (ok) {
            LOG.info("wireguard peer repaired {}", describe(p));
        }
        return ok;
    }

    @Override
    public void delete(WgPeer p) {
        try {
            devices.get(p.device()).removePeer(p.key()); // its sessions and allowed IPs go
            LOG.info("wireguard peer removed dev={} publicKey={}", p.device(), p.publicKey());
        } catch (IOException e) {
            LOG.warn("wireguard peer removal failed dev={} publicKey={} error={}", p.device(), p.publicKey(), e.getMessage());
        }
    }
}
