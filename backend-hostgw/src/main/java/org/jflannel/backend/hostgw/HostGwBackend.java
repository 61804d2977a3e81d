package org.jflannel.backend.hostgw;

import java.io.IOException;
import java.util.Objects;
import java.util.Optional;
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
 * The host-gw backend (upstream {@code backend/hostgw} with {@code backend/route_network.go}).
 *
 * <p>Design note: no device and no encapsulation. Every node is a router for its own pod subnet, and
 * because all nodes share one L2 segment, a node reaches a peer's pods with one plain route: the
 * peer's subnet via the peer's public IP, out of the external interface. The kernel forwards at
 * full speed; the cost is the L2 requirement, which is why a peer whose public IP is not directly
 * reachable is refused (the kernel would refuse the route anyway) and why a NAT'ed public IP is
 * refused at start-up. Like the VXLAN backend we keep the routes right against the kernel: on
 * netlink events and every 10 s, stray routes of vanished peers removed once the first lease list
 * is known (Ours, §6.10); routes stay in place when the daemon stops.
 *
 * <p>Wiring: the daemon constructs this with the chosen external interface and an executor running
 * tasks on its {@code lease-events} thread. {@link #register} runs in the network namespace the
 * routes belong in (it opens the netlink sockets there).
 */
public final class HostGwBackend implements Backend {
    private static final Logger LOG = LoggerFactory.getLogger(HostGwBackend.class);
    /** Upstream's error, verbatim (REFERENCE §2). */
    public static final String NAT_REFUSED = "your PublicIP differs from interface IP, meaning that probably you're on a NAT, "
            + "which is not supported by host-gw backend";

    private final ExternalInterface ext;
    private final Executor leaseEvents;
    private final HostGwSettings settings;

    /**
     * @throws IllegalArgumentException with {@link #NAT_REFUSED} when the public IP is not the
     *         interface's own address (the daemon reports it as {@code Error fetching backend: ...})
     */
    public HostGwBackend(ExternalInterface ext, Executor leaseEvents) {
        this(ext, leaseEvents, HostGwSettings.defaults());
    }

    public HostGwBackend(ExternalInterface ext, Executor leaseEvents, HostGwSettings settings) {
        this.ext = Objects.requireNonNull(ext, "ext");
        this.leaseEvents = Objects.requireNonNull(leaseEvents, "leaseEvents");
        this.settings = Objects.requireNonNull(settings, "settings");
        natRefusal(ext).ifPresent(m -> {
            throw new IllegalArgumentException(m);
        });
    }

    /**
     * Upstream compares the public IPv4 with the interface's IPv4 (ExtAddr vs IfaceAddr). Ours: the
     * public IPv6 is compared with the interface's IPv6 as well, since a route via an address that is
     * not the peer's own cannot work either.
     */
    static Optional<String> natRefusal(ExternalInterface ext) {
        boolean v4 = ext.address() != null && !ext.address().equals(ext.publicIp());
        boolean v6 = ext.address6() != null && !ext.address6().equals(ext.publicIpv6());
        return v4 || v6 ? Optional.of(NAT_REFUSED) : Optional.empty();
    }

    @Override
    public HostGwNetwork register(NetConf conf, SubnetManager subnets)
            throws IOException, InterruptedException, ConfigException {
        if (!(conf.backend() instanceof BackendConfig.HostGw)) {
            throw new ConfigException("Backend.Type", "host-gw backend cannot run Backend.Type " + conf.backend().type());
        }
        if (conf.enableIPv4() && ext.publicIp() == null) {
            throw new ConfigException("EnableIPv4", "interface " + ext.name() + " has no IPv4 address, but IPv4 is enabled");
        }
        if (conf.enableIPv6() && ext.publicIpv6() == null) {
            throw new ConfigException("EnableIPv6", "interface " + ext.name() + " has no IPv6 address, but IPv6 is enabled");
        }
        // upstream: BackendType "host-gw", the public IPs, no backend data
        LeaseAttrs attrs = new LeaseAttrs(conf.enableIPv4() ? ext.publicIp() : null,
                conf.enableIPv6() ? ext.publicIpv6() : null, RoutePlanner.TYPE, null, null);
        Lease lease = subnets.acquireLease(attrs);
        IpPrefix net4 = conf.enableIPv4() ? new IpPrefix(conf.network().inetAddress(), conf.network().prefixLength()) : null;
        IpPrefix net6 = conf.enableIPv6()
                ? new IpPrefix(conf.ipv6Network().inetAddress(), conf.ipv6Network().prefixLength()) : null;
        RtNetlink nl = RtNetlink.open();
        try {
            HostGwNetwork network = new HostGwNetwork(lease, ext.mtu(), nl, new HostGwCounters(), ext.name(), ext.index(), net4, net6);
            network.startHealing(leaseEvents, settings);
            LOG.info("host-gw network registered lease={} mtu={} dev={}", lease.key(), ext.mtu(), ext.name());
            return network;
        } catch (IOException | RuntimeException e) {
            nl.close();
            throw e;
        }
    }
}
