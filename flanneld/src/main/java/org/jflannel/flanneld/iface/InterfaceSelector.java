package org.jflannel.flanneld.iface;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import java.util.stream.Collectors;
import org.jflannel.core.ExternalInterface;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * External interface selection (REFERENCE §1; upstream {@code main.go} and
 * {@code pkg/ipmatch/match.go} {@code LookupExtIface}): pure logic over a {@link NetSnapshot} and a
 * route lookup for {@code --iface-can-reach}. Error texts are upstream's.
 */
public final class InterfaceSelector {
    private static final Logger LOG = LoggerFactory.getLogger(InterfaceSelector.class);

    /** What to look for: the flags involved and the enabled IP families. */
    public record Request(List<String> iface, List<String> ifaceRegex, String ifaceCanReach,
                          String publicIp, String publicIpv6, boolean ipv4, boolean ipv6) {
        public Request {
            iface = List.copyOf(iface);
            ifaceRegex = List.copyOf(ifaceRegex);
            Objects.requireNonNull(ifaceCanReach, "ifaceCanReach");
            Objects.requireNonNull(publicIp, "publicIp");
            Objects.requireNonNull(publicIpv6, "publicIpv6");
            if (!ipv4 && !ipv6) {
                throw new IllegalArgumentException("none defined stack");
            }
        }
    }

    private final NetSnapshot snapshot;
    private final Function<InetAddress, OptionalInt> routeGet;

    /** {@code routeGet}: the output interface index of {@code ip route get <ip>}, empty when there is no route. */
    public InterfaceSelector(NetSnapshot snapshot, Function<InetAddress, OptionalInt> routeGet) {
        this.snapshot = Objects.requireNonNull(snapshot, "snapshot");
        this.routeGet = Objects.requireNonNull(routeGet, "routeGet");
    }

    public ExternalInterface select(Request r) throws SelectionException {
        if (r.iface().isEmpty() && r.ifaceRegex().isEmpty() && r.ifaceCanReach().isEmpty()) {
            String byIp = !r.publicIp().isEmpty() ? r.publicIp() : r.publicIpv6();
            try {
                return lookup(byIp, "", "", r);
            } catch (LookupError e) {
                throw new SelectionException("Failed to find any valid interface to use: " + e.getMessage());
            }
        }
        for (String name : r.iface()) {
            Optional<ExternalInterface> found = tryLookup(name, name, "", "", r);
            if (found.isPresent()) {
                return found.get();
            }
        }
        for (String regex : r.ifaceRegex()) {
            Optional<ExternalInterface> found = tryLookup(regex, "", regex, "", r);
            if (found.isPresent()) {
                return found.get();
            }
        }
        if (!r.ifaceCanReach().isEmpty()) {
            Optional<ExternalInterface> found = tryLookup(r.ifaceCanReach(), "", "", r.ifaceCanReach(), r);
            if (found.isPresent()) {
                return found.get();
            }
        }
        throw new SelectionException("Failed to find interface to use that matches the interfaces and/or regexes provided");
    }

    private Optional<ExternalInterface> tryLookup(String what, String name, String regex, String canReach, Request r) {
        try {
            return Optional.of(lookup(name, regex, canReach, r));
        } catch (LookupError e) {
            LOG.info("Could not find valid interface matching {}: {}", what, e.getMessage());
            return Optional.empty();
        }
    }

    /** Upstream's LookupExtIface for one name/IP, one regex, one can-reach IP, or (all empty) the default route. */
    private ExternalInterface lookup(String name, String regex, String canReach, Request r) throws LookupError {
        NetSnapshot.Iface iface;
        Inet4Address ifaceAddr = null;
        Inet6Address ifaceV6Addr = null;
        if (!name.isEmpty()) {
            Optional<InetAddress> ip = IpLiteral.parse(name);
            if (ip.isPresent()) {
                iface = byIp(ip.get(), r, name);
                if (ip.get() instanceof Inet4Address v4) {
                    ifaceAddr = v4;
                } else {
                    ifaceV6Addr = (Inet6Address) ip.get();
                }
            } else {
                iface = byName(name).orElseThrow(() ->
                        new LookupError("error looking up interface " + name + ": route ip+net: no such network interface"));
            }
        } else if (!regex.isEmpty()) {
            iface = byRegex(regex, r);
        } else if (!canReach.isEmpty()) {
            LOG.info("Determining interface to use based on given IP {}", canReach);
            iface = byRoute(canReach);
        } else {
            LOG.info("Determining IP address of default interface");
            iface = byDefaultRoute(r);
        }
        if (iface.mtu() == 0) {
            throw new LookupError("failed to determine MTU for " + (ifaceAddr == null ? "<nil>" : IpLiteral.format(ifaceAddr))
                    + " interface");
        }
        if (r.ipv4() && ifaceAddr == null) {
            ifaceAddr = AddressPreference.best4(iface).orElseThrow(() ->
                    new LookupError("failed to find IPv4 address for interface " + iface.name()));
        }
        if (r.ipv6() && ifaceV6Addr == null) {
            ifaceV6Addr = AddressPreference.best6(iface).orElseThrow(() ->
                    new LookupError("failed to find IPv6 address for interface " + iface.name()));
        }
        if (!r.ipv4()) {
            ifaceAddr = null;
        }
        LOG.info("Using interface with name {} and address {}", iface.name(),
                ifaceAddr != null ? IpLiteral.format(ifaceAddr) : IpLiteral.format(ifaceV6Addr));
        return new ExternalInterface(iface.name(), iface.index(), iface.mtu(), ifaceAddr, r.ipv6() ? ifaceV6Addr : null,
                r.ipv4() ? publicIp(r.publicIp(), ifaceAddr) : null, r.ipv6() ? publicIpv6(r.publicIpv6(), ifaceV6Addr) : null);
    }

    private static Inet4Address publicIp(String text, Inet4Address fallback) throws LookupError {
        if (text.isEmpty()) {
            return fallback;
        }
        Inet4Address ip = IpLiteral.parse4(text).orElseThrow(() -> new LookupError("invalid public IP address: " + text));
        LOG.info("Using {} as external address", IpLiteral.format(ip));
        return ip;
    }

    private static Inet6Address publicIpv6(String text, Inet6Address fallback) throws LookupError {
        if (text.isEmpty()) {
            return fallback;
        }
        Inet6Address ip = IpLiteral.parse6(text).orElseThrow(() -> new LookupError("invalid public IPv6 address: " + text));
        LOG.info("Using {} as external IPv6 address", IpLiteral.format(ip));
        return ip;
    }

    private NetSnapshot.Iface byIp(InetAddress ip, Request r, String name) throws LookupError {
        LOG.info("Searching for interface using {}", IpLiteral.format(ip));
        boolean v6 = ip instanceof Inet6Address;
        NetSnapshot.Iface iface = carrying(ip, v6).orElseThrow(() ->
                new LookupError("error looking up interface " + name + ": no interface with given IP found"));
        if (r.ipv4() && r.ipv6() && !v6) {
            Optional<InetAddress> pub6 = IpLiteral.parse(r.publicIpv6());
            NetSnapshot.Iface v6Iface = pub6.flatMap(p -> carrying(p, true)).orElseThrow(() -> new LookupError(
                    "error looking up v6 interface " + r.publicIpv6() + ": no interface with given IP found"));
            if (!v6Iface.name().equals(iface.name())) {
                throw new LookupError("v6 interface " + v6Iface.name() + " must be the same with v4 interface " + iface.name());
            }
        }
        return iface;
    }

    private Optional<NetSnapshot.Iface> carrying(InetAddress ip, boolean v6) {
        return snapshot.interfaces().stream().filter(i -> AddressPreference.usable(i, v6).contains(ip)).findFirst();
    }

    private Optional<NetSnapshot.Iface> byName(String name) {
        return snapshot.interfaces().stream().filter(i -> i.name().equals(name)).findFirst();
    }

    private Optional<NetSnapshot.Iface> byIndex(int index) {
        return snapshot.interfaces().stream().filter(i -> i.index() == index).findFirst();
    }

    private NetSnapshot.Iface byRegex(String regex, Request r) throws LookupError {
        Pattern pattern;
        try {
            pattern = Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
            throw new LookupError("could not compile the IP address regex '" + regex + "': " + e.getDescription());
        }
        for (NetSnapshot.Iface i : snapshot.interfaces()) {
            boolean v4ok = !r.ipv4() || matchesAny(pattern, AddressPreference.usable(i, false));
            boolean v6ok = !r.ipv6() || matchesAny(pattern, AddressPreference.usable(i, true));
            if (v4ok && v6ok) {
                return i;
            }
        }
        for (NetSnapshot.Iface i : snapshot.interfaces()) {
            if (pattern.matcher(i.name()).find()) {
                return i;
            }
        }
        String available = snapshot.interfaces().stream()
                .map(i -> i.name() + ":[" + AddressPreference.usable(i, false).stream().map(InetAddress::getHostAddress)
                        .collect(Collectors.joining(" ")) + "]")
                .collect(Collectors.joining(", "));
        throw new LookupError("Could not match pattern " + regex + " to any of the available network interfaces (" + available + ")");
    }

    private static boolean matchesAny(Pattern pattern, List<InetAddress> ips) {
        return !ips.isEmpty() && ips.stream().anyMatch(ip -> pattern.matcher(IpLiteral.format(ip)).find());
    }

    private NetSnapshot.Iface byRoute(String canReach) throws LookupError {
        InetAddress ip = IpLiteral.parse(canReach).orElseThrow(() ->
                new LookupError("failed to get default interface: invalid IP address " + canReach));
        OptionalInt index = routeGet.apply(ip);
        if (index.isEmpty() || index.getAsInt() <= 0) {
            throw new LookupError("failed to get default interface: No suitable route found");
        }
        return byIndex(index.getAsInt()).orElseThrow(() ->
                new LookupError("failed to get default interface: no such network interface"));
    }

    private NetSnapshot.Iface byDefaultRoute(Request r) throws LookupError {
        NetSnapshot.Iface v4 = r.ipv4() ? defaultRouteIface(false) : null;
        NetSnapshot.Iface v6 = r.ipv6() ? defaultRouteIface(true) : null;
        if (v4 != null && v6 != null && !v4.name().equals(v6.name())) {
            throw new LookupError("v6 default route interface " + v6.name() + " must be the same with v4 default route interface "
                    + v4.name());
        }
        return v4 != null ? v4 : v6;
    }

    private NetSnapshot.Iface defaultRouteIface(boolean v6) throws LookupError {
        NetSnapshot.DefaultRoute route = snapshot.defaultRoutes().stream().filter(d -> d.ipv6() == v6).findFirst()
                .orElseThrow(() -> new LookupError("failed to get default interface: Unable to find default "
                        + (v6 ? "v6 " : "") + "route"));
        if (route.linkIndex() <= 0) {
            throw new LookupError("failed to get default interface: Found default route but could not determine interface");
        }
        return byIndex(route.linkIndex()).orElseThrow(() ->
                new LookupError("failed to get default interface: no such network interface"));
    }

    /** One lookup failed; the caller decides whether that is fatal. */
    private static final class LookupError extends Exception {
        private static final long serialVersionUID = 1L;

        LookupError(String message) {
            super(message);
        }
    }
}
