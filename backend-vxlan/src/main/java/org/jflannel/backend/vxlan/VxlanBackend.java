package org.jflannel.backend.vxlan;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Predicate;
import org.jflannel.core.Backend;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.ConfigException;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.MacAddress;
import org.jflannel.core.NetConf;
import org.jflannel.core.SubnetManager;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.linuxnet.netlink.VxlanSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The VXLAN backend (REFERENCE §6).
 *
 * <p>Design note: why 1 route + 1 neighbour + 1 FDB entry per host. Flannel is L3 only; the VXLAN
 * device is just the way to put an inner IP packet into a UDP datagram towards the right host. For
 * each peer we install, on {@code flannel.<VNI>}:
 * <ol>
 *   <li>a permanent neighbour entry: the peer's subnet address (e.g. {@code 10.244.2.0}) has the
 *       peer VTEP's MAC, so the kernel never ARPs across the overlay;</li>
 *   <li>an FDB entry: frames to that MAC go in a datagram to the peer's public IP;</li>
 *   <li>an onlink route: the peer's subnet goes via its subnet address through our device — written
 *       last, so the kernel never looks for a gateway it cannot resolve yet.</li>
 * </ol>
 * That is linear in hosts, not in pods, needs no L2/L3-miss upcalls (nothing breaks while the daemon
 * restarts), and a peer on our own L2 can skip encapsulation entirely (DirectRouting: one plain
 * route via its public IP). The daemon never sees a packet; it only keeps these tables right, which
 * is why we also reconcile them against the kernel and heal a deleted device (Ours, §6.10).
 *
 * <p>Wiring: the daemon constructs this explicitly with the chosen external interface, the VTEP MACs
 * stored in its own node's annotations (kube mode; null otherwise) and an executor running tasks on
 * its single {@code lease-events} thread. {@link #register} runs in the network namespace the devices
 * belong in (it opens the netlink sockets there).
 */
public final class VxlanBackend implements Backend {
    private static final Logger LOG = LoggerFactory.getLogger(VxlanBackend.class);
    static final int ENCAP_OVERHEAD = 50;

    private final ExternalInterface ext;
    private final MacAddress storedMac;
    private final MacAddress storedMacV6;
    private final Executor leaseEvents;
    private final VxlanSettings settings;

    /**
     * @param storedMac    {@code VtepMAC} of the own node's {@code backend-data}, or null
     * @param storedMacV6  {@code VtepMAC} of the own node's {@code backend-v6-data}, or null
     * @param leaseEvents  runs a task on the daemon's {@code lease-events} thread
     */
    public VxlanBackend(ExternalInterface ext, MacAddress storedMac, MacAddress storedMacV6, Executor leaseEvents) {
        this(ext, storedMac, storedMacV6, leaseEvents, VxlanSettings.defaults());
    }

    public VxlanBackend(ExternalInterface ext, MacAddress storedMac, MacAddress storedMacV6, Executor leaseEvents,
                        VxlanSettings settings) {
        this.ext = Objects.requireNonNull(ext, "ext");
        this.storedMac = storedMac;
        this.storedMacV6 = storedMacV6;
        this.leaseEvents = Objects.requireNonNull(leaseEvents, "leaseEvents");
        this.settings = Objects.requireNonNull(settings, "settings");
    }

    @Override
    public VxlanNetwork register(NetConf conf, SubnetManager subnets)
            throws IOException, InterruptedException, ConfigException {
        if (!(conf.backend() instanceof BackendConfig.Vxlan cfg)) {
            throw new ConfigException("Backend.Type", "vxlan backend cannot run Backend.Type " + conf.backend().type());
        }
        LOG.info("VXLAN config: VNI={} Port={} GBP={} Learning={} DirectRouting={}",
                cfg.vni(), cfg.port(), cfg.gbp(), cfg.learning(), cfg.directRouting());
        int mtu = (cfg.mtu() > 0 ? cfg.mtu() : ext.mtu()) - ENCAP_OVERHEAD;
        RtNetlink nl = RtNetlink.open();
        try {
            boolean nexthops = settings.routeNexthops() && nexthopsSupported(nl);
            VtepDevice v4 = null;
            VtepDevice v6 = null;
            if (conf.enableIPv4()) {
                v4 = VtepDevice.ensure(nl, spec("flannel." + cfg.vni(), cfg, family(ext.publicIp(), "IPv4"), mtu, storedMac), ext.name());
            }
            if (conf.enableIPv6()) {
                v6 = VtepDevice.ensure(nl, spec("flannel-v6." + cfg.vni(), cfg, family(ext.publicIpv6(), "IPv6"), mtu, storedMacV6), ext.name());
            }
            Lease lease = subnets.acquireLease(attrs(cfg.vni(), v4, v6));
            if (v4 != null) {
                if (lease.subnet() == null) {
                    throw new IOException("acquired lease " + lease.key() + " has no IPv4 subnet");
                }
                v4.configure(new IpPrefix(lease.subnet().inetAddress(), 32), insideV4(conf.network()));
                v4.checkMac(v4.mac());
            }
            if (v6 != null) {
                if (lease.ipv6Subnet() == null) {
                    throw new IOException("acquired lease " + lease.key() + " has no IPv6 subnet");
                }
                v6.configure(new IpPrefix(lease.ipv6Subnet().inetAddress(), 128), a -> true);
                v6.checkMac(v6.mac());
            }
            VxlanNetwork network = new VxlanNetwork(lease, mtu, nl, v4, v6, cfg.directRouting(),
                    nexthops, Retry.upstream(settings.sleeper()), new VxlanCounters());
            network.startHealing(leaseEvents, settings);
            LOG.info("vxlan network registered lease={} mtu={}", lease.key(), mtu);
            return network;
        } catch (IOException | RuntimeException | InterruptedException | ConfigException e) {
            nl.close();
            throw e;
        }
    }

    /** Ours (issue 23): the default, unless the kernel predates nexthop objects (5.3): plain routes then, as upstream's. */
    private static boolean nexthopsSupported(RtNetlink nl) throws IOException {
        if (nl.nexthopsSupported()) {
            LOG.info("vxlan routes through nexthop objects routeNexthops=true");
            return true;
        }
        LOG.warn("vxlan routes plain: the kernel has no nexthop objects (5.3 and later) routeNexthops=false");
        return false;
    }

    private VxlanSpec spec(String name, BackendConfig.Vxlan cfg, InetAddress local, int mtu, MacAddress stored) {
        MacAddress mac = stored != null ? stored : MacAddress.randomLocal();
        return new VxlanSpec(name, cfg.vni(), ext.index(), local, cfg.port(), cfg.learning(), cfg.gbp(), mtu, mac);
    }

    private InetAddress family(InetAddress publicIp, String family) throws ConfigException {
        if (publicIp == null) {
            throw new ConfigException("EnableIP" + family.substring(2), "interface " + ext.name() + " has no " + family
                    + " address, but " + family + " is enabled");
        }
        return publicIp;
    }

    private LeaseAttrs attrs(int vni, VtepDevice v4, VtepDevice v6) {
        return new LeaseAttrs(
                v4 == null ? null : ext.publicIp(),
                v6 == null ? null : ext.publicIpv6(),
                "vxlan",
                v4 == null ? null : new VxlanBackendData(vni, v4.mac()).toJson(),
                v6 == null ? null : new VxlanBackendData(vni, v6.mac()).toJson());
    }

    private static Predicate<InetAddress> insideV4(Ip4Net network) {
        return a -> network != null && a instanceof Inet4Address v4 && network.contains(Ip4Net.fromInet(v4));
    }
}
