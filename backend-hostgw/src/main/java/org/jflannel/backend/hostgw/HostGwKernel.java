package org.jflannel.backend.hostgw;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jflannel.backend.hostgw.HostGwCounters.ErrorKind;
import org.jflannel.core.Lease;
import org.jflannel.core.peers.Devices;
import org.jflannel.core.peers.LeasePlan;
import org.jflannel.core.peers.PeerKernel;
import org.jflannel.core.peers.ReadBack;
import org.jflannel.core.peers.Writing;
import org.jflannel.linuxnet.netlink.Address;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RouteDiff;
import org.jflannel.linuxnet.netlink.RouteWriter;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host-gw backend's kernel side for the shared loop: a peer lease wants one main-table route per
 * family via its public IP out of the external interface ({@link RoutePlanner}; a peer off our L2 is
 * refused), read back against a route dump ({@link RouteDiff}; strays only routes {@link OwnedRoutes}
 * calls ours). The external interface is followed by name. Runs on the lease-events thread.
 */
final class HostGwKernel implements PeerKernel<Route> {
    private static final Logger LOG = LoggerFactory.getLogger(HostGwKernel.class);

    private final Lease own;
    private final RtNetlink nl;
    private final String extName;
    private final boolean v4;
    private final boolean v6;
    private final IpPrefix network;
    private final IpPrefix ipv6Network;
    private final HostGwCounters counters;
    private final RouteWriter writer;
    /** Index of the external interface as last seen (it changes if the interface is re-created); read by the watch. */
    private volatile int link;
    private boolean linkMissingLogged;

    HostGwKernel(Lease own, RtNetlink nl, String extName, int link, IpPrefix network, IpPrefix ipv6Network,
                 HostGwCounters counters) {
        this.own = own;
        this.nl = nl;
        this.extName = extName;
        this.link = link;
        this.network = network;
        this.ipv6Network = ipv6Network;
        this.v4 = network != null;
        this.v6 = ipv6Network != null;
        this.counters = counters;
        this.writer = new RouteWriter(nl, LOG, this::describe, counters::programmed, counters::removed,
                () -> counters.error(ErrorKind.ROUTE));
    }

    int link() {
        return link;
    }

    String extName() {
        return extName;
    }

    @Override
    public LeasePlan<Route> plan(Lease lease) {
        RoutePlanner.Outcome outcome = planner().plan(lease);
        if (outcome instanceof RoutePlanner.Ignored ignored) {
            return LeasePlan.ignored(ignored.reason()); // it was host-gw before: the loop deletes its routes
        }
        PeerRoutes p = ((RoutePlanner.Planned) outcome).peer();
        return LeasePlan.of(lease, p.routes(), p.refusals());
    }

    /** Never planned by us: remove what it would have had, reachable or not. */
    @Override
    public List<Route> forgotten(Lease lease) {
        if (!RoutePlanner.TYPE.equals(lease.attrs().backendType())) {
            LOG.warn("Ignoring non-host-gw subnet: type={} lease={}", lease.attrs().backendType(), lease.key());
            return List.of();
        }
        return ((RoutePlanner.Planned) new RoutePlanner(link, extName, v4, v6, ip -> true).plan(lease)).peer().routes();
    }

    @Override
    public String describe(Route r) {
        return PeerRoutes.describe(r) + " dev=" + extName;
    }

    @Override
    public List<Route> write(List<Route> routes, Writing<Route> how) {
        return writer.write(routes, how.failing());
    }

    @Override
    public boolean repair(ReadBack.Missing<Route> m, boolean failedBefore) {
        return writer.repair(m.entry(), failedBefore);
    }

    @Override
    public void delete(Route r) {
        writer.delete(r);
    }

    /**
     * Ours: follows the external interface by name. Gone: nothing can be routed (logged once). Back
     * with a new index (deleted and re-created): the loop plans every peer again on it.
     */
    @Override
    public Devices devices() throws NetlinkException {
        Optional<Link> l = nl.link(extName);
        if (l.isEmpty()) {
            if (!linkMissingLogged) {
                linkMissingLogged = true;
                LOG.error("external interface missing name={}: routes wait for it", extName);
            }
            return Devices.MISSING;
        }
        linkMissingLogged = false;
        if (l.get().index() != link) {
            LOG.warn("external interface re-created name={} index={} was={}", extName, l.get().index(), link);
            link = l.get().index();
            return Devices.RENEWED;
        }
        return Devices.READY;
    }

    @Override
    public ReadBack<Route> readBack(Collection<Route> desired, boolean withStrays) throws NetlinkException {
        RouteDiff diff = RouteDiff.of(desired, nl.routes(0, Route.TABLE_MAIN), owned(), withStrays);
        List<ReadBack.Missing<Route>> missing = diff.missing().stream().map(r -> new ReadBack.Missing<>(r, 1)).toList();
        List<Runnable> strays = new ArrayList<>();
        for (Route r : diff.strays()) {
            strays.add(() -> {
                LOG.info("stray route removed {} dev={}", PeerRoutes.describe(r), extName);
                delete(r);
            });
        }
        return new ReadBack<>(missing, strays, 0);
    }

    private OwnedRoutes owned() throws NetlinkException {
        List<IpPrefix> segment = new ArrayList<>();
        for (Address a : nl.addresses(link)) {
            segment.add(a.prefix().network());
        }
        Set<IpPrefix> mine = new HashSet<>();
        if (own.subnet() != null) {
            mine.add(new IpPrefix(own.subnet().inetAddress(), own.subnet().prefixLength()));
        }
        if (own.ipv6Subnet() != null) {
            mine.add(new IpPrefix(own.ipv6Subnet().inetAddress(), own.ipv6Subnet().prefixLength()));
        }
        return new OwnedRoutes(link, network, ipv6Network, segment, mine);
    }

    private RoutePlanner planner() {
        return new RoutePlanner(link, extName, v4, v6, this::onLink);
    }

    /** Upstream's ip.DirectRouting test, plus the device: one route to the peer, no gateway, out of our interface. */
    private boolean onLink(InetAddress peer) {
        try {
            List<Route> routes = nl.routeGet(peer);
            return routes.size() == 1 && routes.get(0).gateway() == null && routes.get(0).linkIndex() == link;
        } catch (NetlinkException e) {
            LOG.debug("route lookup failed ip={} error={}", peer.getHostAddress(), e.getMessage());
            return false;
        }
    }
}
