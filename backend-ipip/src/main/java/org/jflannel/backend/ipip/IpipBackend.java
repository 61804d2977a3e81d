package org.jflannel.backend.ipip;

import java.io.IOException;
import java.util.Objects;
import java.util.concurrent.Executor;
import org.jflannel.core.Backend;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.ConfigException;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.NetConf;
import org.jflannel.core.SubnetManager;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ipip backend (upstream {@code backend/ipip} on {@code backend/route_network.go}).
 *
 * <p>Design note: the cheapest encapsulation there is: an outer IPv4 header (20 bytes, protocol 4) and
 * nothing else, no UDP, no MAC, no VNI. One device, {@code flannel.ipip}, with {@code local} the external
 * interface's address and remote any, so one device reaches every peer: the per-peer route's gateway (the
 * peer's public IP, {@code onlink} since nothing on the tunnel is a neighbour) is the outer destination.
 * Unlike the kernel's fallback {@code tunl0} (local any, which the module makes in every namespace) it is
 * matched first for packets to our own address, and tunl0 stays the user's. With {@code DirectRouting} a
 * peer on our L2 gets its route out of the external interface instead, unencapsulated (host-gw's path).
 * IPv4 only. The routes are kept as host-gw's and VXLAN's are: on netlink events and every 10 s, strays
 * removed once the first lease list is known; device and routes stay when the daemon stops.
 *
 * <p>Wiring: the daemon constructs this with the chosen external interface and an executor running tasks
 * on its {@code lease-events} thread. {@link #register} runs in the network namespace the device belongs in.
 */
public final class IpipBackend implements Backend {
    private static final Logger LOG = LoggerFactory.getLogger(IpipBackend.class);
    /** The IPv4 header the tunnel adds. */
    static final int OVERHEAD = 20;

    private final ExternalInterface ext;
    private final Executor leaseEvents;
    private final IpipSettings settings;

    public IpipBackend(ExternalInterface ext, Executor leaseEvents) {
        this(ext, leaseEvents, IpipSettings.defaults());
    }

    public IpipBackend(ExternalInterface ext, Executor leaseEvents, IpipSettings settings) {
        this.ext = Objects.requireNonNull(ext, "ext");
        this.leaseEvents = Objects.requireNonNull(leaseEvents, "leaseEvents");
        this.settings = Objects.requireNonNull(settings, "settings");
    }

    /**
     * Pure: what ipip refuses before anything is touched. IPv6 (upstream's backend has no IPv6 path and
     * would leave IPv6 peers unrouted): named by its field. No IPv4 address on the interface. An MTU too
     * small (upstream's message).
     *
     * @return the ipip options
     */
    static BackendConfig.Ipip check(NetConf conf, ExternalInterface ext) throws ConfigException {
        if (!(conf.backend() instanceof BackendConfig.Ipip cfg)) {
            throw new ConfigException("Backend.Type", "ipip backend cannot run Backend.Type " + conf.backend().type());
        }
        if (conf.enableIPv6()) {
            throw new ConfigException("EnableIPv6", "EnableIPv6: the ipip backend is IPv4 only (IPv4-in-IPv4 tunnels); "
                    + "set EnableIPv6 to false, or use vxlan, wireguard or host-gw for IPv6");
        }
        if (!conf.enableIPv4()) {
            throw new ConfigException("EnableIPv4", "EnableIPv4: the ipip backend is IPv4 only and needs EnableIPv4");
        }
        if (ext.address() == null || ext.publicIp() == null) {
            throw new ConfigException("EnableIPv4", "interface " + ext.name() + " has no IPv4 address, but ipip needs one");
        }
        if (ext.mtu() - OVERHEAD <= 0) {
            throw new ConfigException("MTU", "MTU " + ext.mtu() + " of iface " + ext.name() + " is too small for ipip mode to work");
        }
        return cfg;
    }

    /** Upstream: PublicIP, BackendType "ipip", no backend data. */
    static LeaseAttrs attrs(ExternalInterface ext) {
        return new LeaseAttrs(ext.publicIp(), null, IpipRoutes.TYPE, null, null);
    }

    @Override
    public IpipNetwork register(NetConf conf, SubnetManager subnets) throws IOException, InterruptedException, ConfigException {
        BackendConfig.Ipip cfg = check(conf, ext);
        LOG.info("IPIP config: DirectRouting={}", cfg.directRouting());
        Lease lease = subnets.acquireLease(attrs(ext));
        IpPrefix network = new IpPrefix(conf.network().inetAddress(), conf.network().prefixLength());
        // upstream: the lease subnet's own (network) address as /32, so no broadcast routes are made
        IpPrefix own = new IpPrefix(lease.subnet().inetAddress(), lease.subnet().prefixLength());
        IpPrefix address = new IpPrefix(lease.subnet().inetAddress(), 32);
        int mtu = ext.mtu() - OVERHEAD;
        RtNetlink nl = RtNetlink.open();
        try {
            IpipDevice device = IpipDevice.ensure(nl, ext.address(), mtu, address,
                    p -> network.contains(p.address()));
            IpipCounters counters = new IpipCounters();
            IpipKernel kernel = new IpipKernel(nl, device, ext.name(), ext.index(), cfg.directRouting(), network, own, counters);
            IpipNetwork n = new IpipNetwork(lease, mtu, nl, counters, kernel);
            n.startHealing(leaseEvents, settings);
            LOG.info("ipip network registered lease={} mtu={} dev={} directRouting={}", lease.key(), mtu, DeviceCheck.NAME,
                    cfg.directRouting());
            return n;
        } catch (IOException | RuntimeException e) {
            nl.close();
            throw e;
        }
    }
}
