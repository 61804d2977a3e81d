package org.jflannel.linuxnet.netlink;

import static org.jflannel.linuxnet.netlink.Rtnl.*;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.jflannel.core.MacAddress;
import org.jflannel.linuxnet.Names;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.internal.Errno;
import org.jflannel.linuxnet.internal.NetlinkSocket;
import org.jflannel.linuxnet.netns.NetNs;

/**
 * The rtnetlink socket: links, addresses, routes, neighbours and FDB entries of one network
 * namespace (the calling thread's at {@link #open()}). One request per operation with NLM_F_ACK, so
 * every failure is a {@link NetlinkException} with errno and the kernel's extended-ack text.
 * {@code replace*} is create-or-replace; {@code delete*} is quiet when the object is already gone.
 * Thread-safe: requests are serialised on this object (one request in flight per socket); give a hot
 * thread its own instance rather than sharing one.
 */
public final class RtNetlink implements AutoCloseable {
    private static final int ACK = NLM_F_ACK;
    private static final int CREATE_REPLACE = NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
    private static final int CREATE_EXCL = NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;

    private final NlChannel channel;
    private final AtomicBoolean closed = new AtomicBoolean();

    private RtNetlink(NlChannel channel) {
        this.channel = channel;
    }

    /** Opens a socket bound to the network namespace of the calling thread. */
    public static RtNetlink open() throws NetlinkException {
        return new RtNetlink(new NlChannel(NetlinkSocket.open(0, 1 << 20, true)));
    }

    // ---- links ----

    public synchronized Optional<Link> link(String name) throws NetlinkException {
        Names.checkIfName("link name", name);
        return getLink(0, name);
    }

    public synchronized Optional<Link> link(int index) throws NetlinkException {
        if (index <= 0) {
            throw new IllegalArgumentException("link index must be positive, got " + index);
        }
        return getLink(index, null);
    }

    private Optional<Link> getLink(int index, String name) throws NetlinkException {
        LinkCodec.byIndexOrName(channel.request(RTM_GETLINK, ACK), index, name);
        List<Link> out = new ArrayList<>(1);
        int errno = channel.execute((t, b, o, l) -> t == RTM_NEWLINK ? LinkCodec.decode(b, o, l) : null, out);
        if (errno == Errno.ENODEV) {
            return Optional.empty();
        }
        check(errno, "RTM_GETLINK", () -> name != null ? name : "index " + index);
        return out.stream().findFirst();
    }

    public synchronized List<Link> links() throws NetlinkException {
        return channel.dump(RTM_GETLINK, LinkCodec::dump, (t, b, o, l) -> t == RTM_NEWLINK ? LinkCodec.decode(b, o, l) : null);
    }

    /** Creates a VXLAN device (NLM_F_CREATE|NLM_F_EXCL): EEXIST when a device of that name exists. */
    public synchronized void createVxlan(VxlanSpec spec) throws NetlinkException {
        LinkCodec.newVxlan(channel.request(RTM_NEWLINK, CREATE_EXCL), spec);
        check(channel.execute(), "RTM_NEWLINK", () -> spec.name() + " type vxlan id " + spec.vni());
    }

    /**
     * Creates a VXLAN-GPE device in external mode listening on UDP {@code port} ({@link LinkCodec#newVxlanGpe}):
     * EEXIST when a device of that name exists, EADDRINUSE when the port is taken.
     */
    public synchronized void createVxlanGpe(String name, int port) throws NetlinkException {
        Names.checkIfName("vxlan-gpe name", name);
        if (port < 1 || port > 0xffff) {
            throw new IllegalArgumentException("vxlan-gpe port: expected 1..65535, got " + port);
        }
        LinkCodec.newVxlanGpe(channel.request(RTM_NEWLINK, CREATE_EXCL), name, port);
        check(channel.execute(), "RTM_NEWLINK", () -> name + " type vxlan gpe external dstport " + port);
    }

    /**
     * Creates an IPv4-in-IPv4 tunnel device with {@code local} (null: any) and remote any
     * ({@link LinkCodec#newIpip}; NLM_F_CREATE|NLM_F_EXCL): EEXIST when a device of that name exists,
     * EOPNOTSUPP ("Unknown device type") when the kernel has no {@code ipip} module.
     */
    public synchronized void createIpip(String name, java.net.Inet4Address local) throws NetlinkException {
        Names.checkIfName("ipip name", name);
        LinkCodec.newIpip(channel.request(RTM_NEWLINK, CREATE_EXCL), name, local);
        check(channel.execute(), "RTM_NEWLINK", () -> name + " type ipip local " + (local == null ? "any" : local.getHostAddress())
                + " remote any");
    }

    public synchronized void createVeth(String name, String peerName) throws NetlinkException {
        Names.checkIfName("veth name", name);
        Names.checkIfName("veth peer name", peerName);
        LinkCodec.newVeth(channel.request(RTM_NEWLINK, CREATE_EXCL), name, peerName);
        check(channel.execute(), "RTM_NEWLINK", () -> name + " type veth peer " + peerName);
    }

    public synchronized void createDummy(String name) throws NetlinkException {
        createSimple(name, "dummy");
    }

    public synchronized void createBridge(String name) throws NetlinkException {
        createSimple(name, "bridge");
    }

    /**
     * Creates a kernel WireGuard device (kind {@code wireguard}; the kernel loads the module when it
     * can): EOPNOTSUPP ("Unknown device type") when the kernel has no WireGuard, EEXIST when a device of
     * that name exists. Configure it through {@link WireguardNetlink}.
     */
    public synchronized void createWireguard(String name) throws NetlinkException {
        createSimple(name, "wireguard");
    }

    private void createSimple(String name, String kind) throws NetlinkException {
        Names.checkIfName(kind + " name", name);
        LinkCodec.newSimple(channel.request(RTM_NEWLINK, CREATE_EXCL), name, kind);
        check(channel.execute(), "RTM_NEWLINK", () -> name + " type " + kind);
    }

    public synchronized void setMaster(int index, int masterIndex) throws NetlinkException {
        NlWriter w = channel.request(RTM_NEWLINK, ACK);
        LinkCodec.set(w, index, 0, 0);
        w.attrU32(IFLA_MASTER, masterIndex);
        check(channel.execute(), "RTM_NEWLINK", () -> dev(index) + " master " + dev(masterIndex));
    }

    /** Moves the device into another namespace (IFLA_NET_NS_FD); its index there may differ. */
    public synchronized void moveToNetns(int index, NetNs target) throws NetlinkException {
        NlWriter w = channel.request(RTM_NEWLINK, ACK);
        LinkCodec.set(w, index, 0, 0);
        w.attrU32(IFLA_NET_NS_FD, target.fd());
        check(channel.execute(), "RTM_NEWLINK", () -> dev(index) + " netns " + target.name());
    }

    public synchronized void setUp(int index) throws NetlinkException {
        LinkCodec.set(channel.request(RTM_NEWLINK, ACK), index, Link.IFF_UP, Link.IFF_UP);
        check(channel.execute(), "RTM_NEWLINK", () -> dev(index) + " up");
    }

    public synchronized void setDown(int index) throws NetlinkException {
        LinkCodec.set(channel.request(RTM_NEWLINK, ACK), index, 0, Link.IFF_UP);
        check(channel.execute(), "RTM_NEWLINK", () -> dev(index) + " down");
    }

    public synchronized void setMtu(int index, int mtu) throws NetlinkException {
        NlWriter w = channel.request(RTM_NEWLINK, ACK);
        LinkCodec.set(w, index, 0, 0);
        w.attrU32(IFLA_MTU, mtu);
        check(channel.execute(), "RTM_NEWLINK", () -> dev(index) + " mtu " + mtu);
    }

    public synchronized void setMac(int index, MacAddress mac) throws NetlinkException {
        NlWriter w = channel.request(RTM_NEWLINK, ACK);
        LinkCodec.set(w, index, 0, 0);
        w.attr(IFLA_ADDRESS, mac.bytes());
        check(channel.execute(), "RTM_NEWLINK", () -> dev(index) + " address " + mac);
    }

    /** Changes VXLAN learning in place; throws when the kernel refuses the change. */
    public synchronized void setVxlanLearning(int index, boolean learning) throws NetlinkException {
        LinkCodec.vxlanLearning(channel.request(RTM_NEWLINK, ACK), index, learning);
        check(channel.execute(), "RTM_NEWLINK", () -> dev(index) + " type vxlan " + (learning ? "learning" : "nolearning"));
    }

    /** Deletes the device; quiet when it is already gone. */
    public synchronized void deleteLink(int index) throws NetlinkException {
        LinkCodec.byIndexOrName(channel.request(RTM_DELLINK, ACK), index, null);
        checkQuiet(channel.execute(), "RTM_DELLINK", () -> "index " + index);
    }

    /** Deletes the device; quiet when it is already gone. */
    public synchronized void deleteLink(String name) throws NetlinkException {
        Names.checkIfName("link name", name);
        LinkCodec.byIndexOrName(channel.request(RTM_DELLINK, ACK), 0, name);
        checkQuiet(channel.execute(), "RTM_DELLINK", () -> name);
    }

    // ---- addresses ----

    public synchronized void addAddress(int index, IpPrefix p) throws NetlinkException {
        AddrCodec.address(channel.request(RTM_NEWADDR, CREATE_EXCL), index, p);
        check(channel.execute(), "RTM_NEWADDR", () -> p + " " + dev(index));
    }

    public synchronized void replaceAddress(int index, IpPrefix p) throws NetlinkException {
        AddrCodec.address(channel.request(RTM_NEWADDR, CREATE_REPLACE), index, p);
        check(channel.execute(), "RTM_NEWADDR", () -> p + " " + dev(index));
    }

    /** Deletes the address; quiet when it (or its device) is already gone. */
    public synchronized void deleteAddress(int index, IpPrefix p) throws NetlinkException {
        AddrCodec.address(channel.request(RTM_DELADDR, ACK), index, p);
        checkQuiet(channel.execute(), "RTM_DELADDR", () -> p + " " + dev(index));
    }

    /** IPv4 and IPv6 addresses of the device. */
    public synchronized List<Address> addresses(int index) throws NetlinkException {
        return channel.dump(RTM_GETADDR, w -> AddrCodec.dump(w, AF_UNSPEC), (t, b, o, l) -> {
            Address a = t == RTM_NEWADDR ? AddrCodec.decode(b, o, l) : null;
            return a != null && a.linkIndex() == index ? a : null;
        });
    }

    // ---- routes ----

    public synchronized void replaceRoute(Route r) throws NetlinkException {
        RouteCodec.route(channel.request(RTM_NEWROUTE, CREATE_REPLACE), r, false);
        check(channel.execute(), "RTM_NEWROUTE", () -> describe(r));
    }

    /** Deletes the route; quiet when it is already gone (ESRCH) or its device is. */
    public synchronized void deleteRoute(Route r) throws NetlinkException {
        RouteCodec.route(channel.request(RTM_DELROUTE, ACK), r, true);
        checkQuiet(channel.execute(), "RTM_DELROUTE", () -> describe(r));
    }

    /** Routes of one table; family AF_INET (2), AF_INET6 (10) or 0 for both. Cached clones are left out. */
    public synchronized List<Route> routes(int family, int table) throws NetlinkException {
        if (family != AF_UNSPEC && family != AF_INET && family != AF_INET6) {
            throw new IllegalArgumentException("route family must be 0, 2 or 10, got " + family);
        }
        return channel.dump(RTM_GETROUTE, w -> RouteCodec.dump(w, family), (t, b, o, l) -> {
            if (t != RTM_NEWROUTE || RouteCodec.isCloned(b, o)) {
                return null;
            }
            Route r = RouteCodec.decode(b, o, l);
            return r != null && r.table() == table ? r : null;
        });
    }

    /** Main-table routes through the device, both families. */
    public synchronized List<Route> routesOf(int linkIndex) throws NetlinkException {
        List<Route> out = new ArrayList<>();
        for (Route r : routes(AF_UNSPEC, Route.TABLE_MAIN)) {
            if (r.linkIndex() == linkIndex) {
                out.add(r);
            }
        }
        return out;
    }

    /** The route the kernel would use for {@code dst}, like {@code ip route get}. */
    public synchronized List<Route> routeGet(InetAddress dst) throws NetlinkException {
        RouteCodec.get(channel.request(RTM_GETROUTE, ACK), dst);
        List<Route> out = new ArrayList<>(1);
        int errno = channel.execute((t, b, o, l) -> t == RTM_NEWROUTE ? RouteCodec.decode(b, o, l) : null, out);
        check(errno, "RTM_GETROUTE", () -> Inets.format(dst));
        return out;
    }

    // ---- nexthop objects (kernel >= 5.3) ----

    public synchronized void replaceNexthop(Nexthop nh) throws NetlinkException {
        NexthopCodec.nexthop(channel.request(RTM_NEWNEXTHOP, CREATE_REPLACE), nh);
        check(channel.execute(), "RTM_NEWNEXTHOP", () -> describe(nh));
    }

    /**
     * Whether the kernel has nexthop objects (5.3 and later): a dump of them is answered. An older kernel does not
     * know the request type (EOPNOTSUPP); any other failure is thrown.
     */
    public synchronized boolean nexthopsSupported() throws NetlinkException {
        try {
            channel.dump(RTM_GETNEXTHOP, w -> NexthopCodec.dump(w, 0), (t, b, o, l) -> null);
            return true;
        } catch (NetlinkException e) {
            if (e.errno() == Errno.EOPNOTSUPP) {
                return false;
            }
            throw e;
        }
    }

    /** Deletes the nexthop object and with it every route through it; quiet when it is already gone. */
    public synchronized void deleteNexthop(int id) throws NetlinkException {
        NexthopCodec.delete(channel.request(RTM_DELNEXTHOP, ACK), id);
        checkQuiet(channel.execute(), "RTM_DELNEXTHOP", () -> "id " + Integer.toUnsignedString(id));
    }

    /**
     * Single-gateway nexthop objects on the device (0: all; {@code ip nexthop show dev}); groups and blackholes are left
     * out. Empty on a kernel without nexthop objects (before 5.3 the request type is unknown: EOPNOTSUPP).
     */
    public synchronized List<Nexthop> nexthops(int linkIndex) throws NetlinkException {
        try {
            return channel.dump(RTM_GETNEXTHOP, w -> NexthopCodec.dump(w, linkIndex), (t, b, o, l) -> {
                Nexthop nh = t == RTM_NEWNEXTHOP ? NexthopCodec.decode(b, o, l) : null;
                return nh != null && (linkIndex == 0 || nh.linkIndex() == linkIndex) ? nh : null;
            });
        } catch (NetlinkException e) {
            if (e.errno() == Errno.EOPNOTSUPP) {
                return List.of();
            }
            throw e;
        }
    }

    // ---- neighbours ----

    public synchronized void replaceNeighbour(Neighbour n) throws NetlinkException {
        NeighCodec.neighbour(channel.request(RTM_NEWNEIGH, CREATE_REPLACE), n);
        check(channel.execute(), "RTM_NEWNEIGH", () -> describe(n));
    }

    /** Deletes the entry; quiet when it (or its device) is already gone. */
    public synchronized void deleteNeighbour(Neighbour n) throws NetlinkException {
        NeighCodec.neighbour(channel.request(RTM_DELNEIGH, ACK), n);
        checkQuiet(channel.execute(), "RTM_DELNEIGH", () -> describe(n));
    }

    /** ARP and NDP entries of the device. */
    public synchronized List<Neighbour> neighbours(int linkIndex) throws NetlinkException {
        return channel.dump(RTM_GETNEIGH, w -> NeighCodec.dump(w, AF_UNSPEC), (t, b, o, l) -> {
            Neighbour n = t == RTM_NEWNEIGH ? NeighCodec.decodeNeighbour(b, o, l) : null;
            return n != null && n.linkIndex() == linkIndex ? n : null;
        });
    }

    // ---- FDB ----

    public synchronized void replaceFdb(FdbEntry e) throws NetlinkException {
        NeighCodec.fdb(channel.request(RTM_NEWNEIGH, CREATE_REPLACE), e);
        check(channel.execute(), "RTM_NEWNEIGH", () -> describe(e));
    }

    /** Deletes the entry; quiet when it (or its device) is already gone. */
    public synchronized void deleteFdb(FdbEntry e) throws NetlinkException {
        NeighCodec.fdb(channel.request(RTM_DELNEIGH, ACK), e);
        checkQuiet(channel.execute(), "RTM_DELNEIGH", () -> describe(e));
    }

    /** FDB entries with a remote destination on the device. */
    public synchronized List<FdbEntry> fdb(int linkIndex) throws NetlinkException {
        return channel.dump(RTM_GETNEIGH, w -> NeighCodec.dump(w, AF_BRIDGE), (t, b, o, l) -> {
            FdbEntry e = t == RTM_NEWNEIGH ? NeighCodec.decodeFdb(b, o, l) : null;
            return e != null && e.linkIndex() == linkIndex ? e : null;
        });
    }

    // ---- pipelined ----

    /** An empty batch of pipelined neighbour, FDB and route requests on this socket. */
    public Batch batch() {
        return new Batch(this);
    }

    synchronized BatchResult execute(List<Batch.Request> requests) throws NetlinkException {
        int[] errnos = new int[requests.size()];
        String[] messages = new String[requests.size()];
        channel.pipeline(requests, errnos, messages);
        List<NetlinkException> errors = new ArrayList<>(Collections.nCopies(requests.size(), null));
        Map<Integer, String> devs = new HashMap<>(); // one lookup per device, not per failure
        for (int i = 0; i < errnos.length; i++) {
            Batch.Request r = requests.get(i);
            if (errnos[i] != 0 && !(r.deletes() && isGone(errnos[i]))) {
                errors.set(i, new NetlinkException(typeName(r.type()), describe(r.subject(), devs), errnos[i], messages[i]));
            }
        }
        return new BatchResult(errors);
    }

    private String describe(Object subject, Map<Integer, String> devs) {
        if (subject instanceof Route r) {
            return r.describe() + (r.linkIndex() > 0 ? " " + devs.computeIfAbsent(r.linkIndex(), this::dev) : "")
                    + (r.onlink() ? " onlink" : "");
        }
        if (subject instanceof Nexthop nh) {
            return "nexthop " + nh.describe() + " " + devs.computeIfAbsent(nh.linkIndex(), this::dev);
        }
        if (subject instanceof Neighbour n) {
            return Inets.format(n.ip()) + (n.mac() != null ? " lladdr " + n.mac() : "") + " "
                    + devs.computeIfAbsent(n.linkIndex(), this::dev);
        }
        FdbEntry e = (FdbEntry) subject;
        return e.mac() + " dst " + Inets.format(e.dst()) + " " + devs.computeIfAbsent(e.linkIndex(), this::dev) + " self";
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            channel.close();
        }
    }

    // ---- errors ----

    private void check(int errno, String op, Supplier<String> object) throws NetlinkException {
        if (errno != 0) {
            String kernelMessage = channel.lastKernelMessage();
            throw new NetlinkException(op, object.get(), errno, kernelMessage);
        }
    }

    /** For deletes: "already gone" is success. */
    private void checkQuiet(int errno, String op, Supplier<String> object) throws NetlinkException {
        if (isGone(errno)) {
            return;
        }
        check(errno, op, object);
    }

    private static boolean isGone(int errno) {
        return errno == Errno.ENOENT || errno == Errno.ESRCH || errno == Errno.ENODEV || errno == Errno.EADDRNOTAVAIL;
    }

    private String describe(Object subject) {
        return describe(subject, new HashMap<>());
    }

    /**
     * "dev flannel.1", looked up only when building an error (the request is complete by then, so the
     * channel is free); "dev #7" when the device cannot be found.
     */
    private String dev(int index) {
        try {
            return "dev " + getLink(index, null).map(Link::name).orElse("#" + index);
        } catch (NetlinkException | RuntimeException e) {
            return "dev #" + index;
        }
    }
}
