package org.jflannel.backend.ipip;

import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import org.jflannel.backend.ipip.IpipCounters.ErrorKind;
import org.jflannel.core.Lease;
import org.jflannel.core.peers.Devices;
import org.jflannel.core.peers.LeasePlan;
import org.jflannel.core.peers.PeerKernel;
import org.jflannel.core.peers.ReadBack;
import org.jflannel.core.peers.Writing;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RouteDiff;
import org.jflannel.linuxnet.netlink.RouteWriter;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ipip backend's kernel side for the shared loop: a peer lease wants one main-table route
 * ({@link IpipRoutes}), read back against a route dump ({@link RouteDiff}; strays only routes
 * {@link OwnedRoutes} calls ours). Before each pass {@code flannel.ipip} is checked and re-created when
 * gone ({@link IpipDevice}); the external interface is followed by name (DirectRouting routes use it).
 * Runs on the lease-events thread; {@link #ours} is read by the watch thread.
 */
final class IpipKernel implements PeerKernel<Route> {
    private static final Logger LOG = LoggerFactory.getLogger(IpipKernel.class);

    private final RtNetlink nl;
    private final IpipDevice device;
    private final String extName;
    private final boolean directRouting;
    private final IpPrefix network;
    private final IpPrefix own;
    private final IpipCounters counters;
    private final RouteWriter writer;
    private volatile int tunnel;
    private volatile int ext;

    IpipKernel(RtNetlink nl, IpipDevice device, String extName, int ext, boolean directRouting, IpPrefix network,
               IpPrefix own, IpipCounters counters) {
        this.nl = nl;
        this.device = device;
        this.extName = extName;
        this.ext = ext;
        this.tunnel = device.index();
        this.directRouting = directRouting;
        this.network = network;
        this.own = own;
        this.counters = counters;
        this.writer = new RouteWriter(nl, LOG, this::describe, counters::programmed, counters::removed,
                () -> counters.error(ErrorKind.ROUTE));
    }

    /** Whether a netlink event about link {@code index} (or named {@code name}) concerns us. */
    boolean ours(String name, int index) {
        return index == tunnel || DeviceCheck.NAME.equals(name);
    }

    boolean external(String name, int index) {
        return index == ext || extName.equals(name);
    }

    int tunnel() {
        return tunnel;
    }

    int ext() {
        return ext;
    }

    private IpipRoutes planner() {
        return new IpipRoutes(tunnel, ext, directRouting, this::onLink);
    }

    @Override
    public LeasePlan<Route> plan(Lease lease) {
        return planner().plan(lease);
    }

    /** Never planned by us: remove what it would have had, through the tunnel or direct. */
    @Override
    public List<Route> forgotten(Lease lease) {
        if (!IpipRoutes.TYPE.equals(lease.attrs().backendType())) {
            LOG.warn("Ignoring non-ipip subnet: type={} lease={}", lease.attrs().backendType(), lease.key());
            return List.of();
        }
        if (lease.subnet() == null || lease.attrs().publicIp() == null) {
            return List.of();
        }
        IpPrefix subnet = new IpPrefix(lease.subnet().inetAddress(), lease.subnet().prefixLength());
        List<Route> out = new ArrayList<>(2);
        out.add(IpipRoutes.route(subnet, lease.attrs().publicIp(), tunnel));
        if (directRouting) {
            out.add(IpipRoutes.route(subnet, lease.attrs().publicIp(), ext));
        }
        return out;
    }

    @Override
    public String describe(Route r) {
        return IpipRoutes.describe(r) + " dev=" + devName(r);
    }

    private String devName(Route r) {
        return r.linkIndex() == ext ? extName : DeviceCheck.NAME;
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
     * {@code flannel.ipip} re-created when it vanished (its routes went with it: every peer is written
     * again); the external interface followed by name (DirectRouting's routes are planned again on it).
     */
    @Override
    public Devices devices() throws IOException {
        boolean renewed = false;
        Optional<Link> e = nl.link(extName);
        if (e.isPresent() && e.get().index() != ext) {
            LOG.warn("external interface re-created name={} index={} was={}", extName, e.get().index(), ext);
            ext = e.get().index();
            renewed = true;
        }
        try {
            if (!device.healthy()) {
                device.recreate();
                tunnel = device.index();
                renewed = true;
            }
        } catch (IOException ex) {
            counters.error(ErrorKind.DEVICE);
            LOG.error("ipip device recreate failed name={} error={}", DeviceCheck.NAME, ex.getMessage());
            return Devices.FAILED;
        }
        return renewed ? Devices.RENEWED : Devices.READY;
    }

    @Override
    public ReadBack<Route> readBack(Collection<Route> desired, boolean withStrays) throws IOException {
        int fixed = device.repairState();
        RouteDiff diff = RouteDiff.of(desired, nl.routes(2, Route.TABLE_MAIN),
                new OwnedRoutes(tunnel, ext, directRouting, network, own), withStrays);
        List<ReadBack.Missing<Route>> missing = diff.missing().stream().map(r -> new ReadBack.Missing<>(r, 1)).toList();
        List<Runnable> strays = new ArrayList<>();
        for (Route r : diff.strays()) {
            strays.add(() -> {
                LOG.info("stray route removed {} dev={}", IpipRoutes.describe(r), devName(r));
                delete(r);
            });
        }
        return new ReadBack<>(missing, strays, fixed);
    }

    /** Upstream's ip.DirectRouting: {@code ip route get <ip>} gives one route without a gateway (ours: out of the external interface). */
    private boolean onLink(InetAddress peer) {
        try {
            List<Route> routes = nl.routeGet(peer);
            return routes.size() == 1 && routes.get(0).gateway() == null && routes.get(0).linkIndex() == ext;
        } catch (NetlinkException e) {
            LOG.debug("route lookup failed ip={} error={}", peer.getHostAddress(), e.getMessage());
            return false;
        }
    }
}
