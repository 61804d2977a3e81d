package org.jflannel.backend.hostgw;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jflannel.backend.hostgw.HostGwCounters.ErrorKind;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.Network;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.Address;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registered host-gw network: one main-table route per peer subnet via the peer's public IP out
 * of the external interface. Every method except {@link #close()} and the counters runs on the
 * daemon's {@code lease-events} thread (netlink events and the timer hand their work to it through
 * {@link HostGwHealing}), so nothing here is locked.
 */
public final class HostGwNetwork implements Network {
    private static final Logger LOG = LoggerFactory.getLogger(HostGwNetwork.class);

    private final Lease own;
    private final int mtu;
    private final RtNetlink nl;
    private final String extName;
    private final boolean v4;
    private final boolean v6;
    private final IpPrefix network;
    private final IpPrefix ipv6Network;
    private final HostGwCounters counters = new HostGwCounters();
    /** Lease key → its routes and refusals, as last planned. */
    private final Map<String, PeerRoutes> peers = new LinkedHashMap<>();
    /** Routes whose last write failed: logged once, retried by the periodic reconcile only. */
    private final Set<Route> failing = new HashSet<>();
    private int link;
    private boolean linkMissingLogged;
    private HostGwHealing healing;
    private boolean snapshotSeen;
    private volatile boolean closed;

    HostGwNetwork(Lease own, int mtu, RtNetlink nl, String extName, int link, IpPrefix network, IpPrefix ipv6Network) {
        this.own = own;
        this.mtu = mtu;
        this.nl = nl;
        this.extName = extName;
        this.link = link;
        this.network = network;
        this.ipv6Network = ipv6Network;
        this.v4 = network != null;
        this.v6 = ipv6Network != null;
    }

    void startHealing(HostGwHealing h) {
        this.healing = h;
    }

    @Override
    public Lease lease() {
        return own;
    }

    /** The external interface's MTU: no encapsulation (upstream {@code Mtu: extIface.Iface.MTU}). */
    @Override
    public int mtu() {
        return mtu;
    }

    public HostGwCounters counters() {
        return counters;
    }

    /** Number of peers with at least one route planned. */
    public int peers() {
        return (int) peers.values().stream().filter(p -> !p.routes().isEmpty()).count();
    }

    /** Index of the external interface as last seen (it changes if the interface is re-created). */
    int link() {
        return link;
    }

    @Override
    public void apply(List<LeaseEvent> batch) {
        boolean first = !snapshotSeen;
        for (LeaseEvent event : batch) {
            if (closed || Thread.currentThread().isInterrupted()) {
                return;
            }
            try {
                if (event.type() == LeaseEvent.Type.ADDED) {
                    added(event.lease());
                } else {
                    removed(event.lease());
                }
            } catch (RuntimeException e) { // one bad peer never blocks the others
                counters.error(ErrorKind.LEASE_SKIPPED);
                LOG.error("lease failed lease={} error={}", event.lease().key(), e.toString());
            }
        }
        snapshotSeen = true;
        if (first) {
            reconcile(); // the first batch is the complete list: routes of vanished peers go now (issue #2554)
        }
    }

    private void added(Lease lease) {
        if (lease.sameSubnets(own)) {
            return;
        }
        RoutePlanner.Outcome outcome = planner().plan(lease);
        if (outcome instanceof RoutePlanner.Ignored ignored) {
            LOG.warn("{} lease={}", ignored.reason(), lease.key());
            PeerRoutes old = peers.remove(lease.key()); // it was host-gw before: its routes go
            if (old != null) {
                old.routes().forEach(this::delete);
            }
            return;
        }
        PeerRoutes now = ((RoutePlanner.Planned) outcome).peer();
        PeerRoutes old = peers.put(now.key(), now);
        for (String refusal : now.refusals()) {
            counters.error(ErrorKind.LEASE_SKIPPED);
            LOG.warn("peer refused lease={} {}", lease.key(), refusal);
        }
        for (Route r : now.routes()) {
            LOG.info("subnet added {} dev={}", PeerRoutes.describe(r), extName);
            write(r);
        }
        if (old != null) {
            old.routes().stream().filter(r -> !now.routes().contains(r)).forEach(this::delete); // moved peer
        }
    }

    private void removed(Lease lease) {
        if (!RoutePlanner.TYPE.equals(lease.attrs().backendType())) {
            LOG.warn("Ignoring non-host-gw subnet: type={} lease={}", lease.attrs().backendType(), lease.key());
            return;
        }
        PeerRoutes p = peers.remove(lease.key());
        List<Route> routes = p != null ? p.routes()
                // never planned by us: remove what it would have had, reachable or not
                : ((RoutePlanner.Planned) new RoutePlanner(link, extName, v4, v6, ip -> true).plan(lease)).peer().routes();
        for (Route r : routes) {
            LOG.info("subnet removed {} dev={}", PeerRoutes.describe(r), extName);
            delete(r);
        }
    }

    /** Writes a route (replace: idempotent, and fixes a route to the same subnet via an old address). */
    private boolean write(Route r) {
        try {
            nl.replaceRoute(r);
            counters.programmed();
            failing.remove(r);
            return true;
        } catch (NetlinkException e) {
            counters.error(ErrorKind.ROUTE);
            if (failing.add(r)) {
                LOG.error("route add failed {} dev={} error={}", PeerRoutes.describe(r), extName, e.getMessage());
            } else {
                LOG.debug("route add failed again {} error={}", PeerRoutes.describe(r), e.getMessage());
            }
            return false;
        }
    }

    private void delete(Route r) {
        failing.remove(r);
        try {
            nl.deleteRoute(r);
            counters.removed();
        } catch (NetlinkException e) {
            counters.error(ErrorKind.ROUTE);
            LOG.error("route delete failed {} dev={} error={}", PeerRoutes.describe(r), extName, e.getMessage());
        }
    }

    /**
     * Ours (REFERENCE §6.10): re-writes missing or wrong routes, re-checks refused peers and, once the
     * first complete lease list was applied, deletes routes of no current lease.
     */
    @Override
    public void reconcile() {
        reconcile(true);
    }

    /**
     * @param periodic false for a reconcile triggered by a netlink event: routes that failed to write
     *                 and refused peers are then left to the periodic one
     */
    void reconcile(boolean periodic) {
        if (closed) {
            return;
        }
        try {
            if (!refreshLink()) {
                return;
            }
            if (periodic) {
                recheckRefused();
            }
            List<Route> wanted = new ArrayList<>();
            peers.values().forEach(p -> wanted.addAll(p.routes()));
            RouteDiff diff = RouteDiff.of(wanted, nl.routes(0, Route.TABLE_MAIN), owned(), snapshotSeen);
            int repairs = 0;
            for (Route r : diff.missing()) {
                boolean known = failing.contains(r);
                if (known && !periodic) {
                    continue;
                }
                if (!known) {
                    LOG.info("route repaired {} dev={}", PeerRoutes.describe(r), extName);
                }
                if (write(r)) {
                    repairs++;
                    if (known) {
                        LOG.info("route added after earlier failure {} dev={}", PeerRoutes.describe(r), extName);
                    }
                }
            }
            for (Route r : diff.strays()) {
                LOG.info("stray route removed {} dev={}", PeerRoutes.describe(r), extName);
                delete(r);
                repairs++;
            }
            counters.reconciled();
            if (repairs > 0) {
                counters.repaired(repairs);
                LOG.info("reconcile repaired routes={} peers={}", repairs, peers());
            }
        } catch (NetlinkException e) {
            counters.error(ErrorKind.DUMP);
            LOG.error("reconcile failed error={}", e.getMessage());
        }
    }

    /**
     * Ours: follows the external interface by name. Gone: nothing can be routed (logged once). Back
     * with a new index (deleted and re-created): every peer is planned again on it.
     */
    private boolean refreshLink() throws NetlinkException {
        Optional<Link> l = nl.link(extName);
        if (l.isEmpty()) {
            if (!linkMissingLogged) {
                linkMissingLogged = true;
                LOG.error("external interface missing name={}: routes wait for it", extName);
            }
            return false;
        }
        linkMissingLogged = false;
        if (l.get().index() != link) {
            LOG.warn("external interface re-created name={} index={} was={}", extName, l.get().index(), link);
            link = l.get().index();
            if (healing != null) {
                healing.watch(link);
            }
            failing.clear();
            List<Lease> leases = peers.values().stream().map(PeerRoutes::lease).toList();
            peers.clear();
            RoutePlanner planner = planner();
            for (Lease lease : leases) {
                if (planner.plan(lease) instanceof RoutePlanner.Planned p) {
                    peers.put(p.peer().key(), p.peer());
                }
            }
        }
        return true;
    }

    /** Peers refused earlier may be reachable now (an address or route added): plan them again. */
    private void recheckRefused() {
        List<PeerRoutes> refused = peers.values().stream().filter(p -> !p.refusals().isEmpty()).toList();
        if (refused.isEmpty()) {
            return;
        }
        RoutePlanner planner = planner();
        for (PeerRoutes p : refused) {
            if (planner.plan(p.lease()) instanceof RoutePlanner.Planned np && !np.peer().routes().equals(p.routes())) {
                peers.put(np.peer().key(), np.peer());
                np.peer().routes().stream().filter(r -> !p.routes().contains(r))
                        .forEach(r -> LOG.info("peer accepted {} dev={}", PeerRoutes.describe(r), extName));
            }
        }
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

    @Override
    public void close() {
        closed = true;
        if (healing != null) {
            healing.close();
        }
        nl.close(); // routes stay in place (REFERENCE §9.4)
    }

    boolean closed() {
        return closed;
    }
}
