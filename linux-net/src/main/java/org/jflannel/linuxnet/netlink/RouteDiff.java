package org.jflannel.linuxnet.netlink;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Pure: the routes a routed backend (host-gw, ipip) wants against a dump of a table. A wanted route is
 * present when a route with its destination, gateway, device, table, type and onlink flag is there
 * (upstream's {@code routeEqual} compares destination, gateway and device). A stray is a dumped route the
 * backend's predicate calls its own (what it would have written) that no wanted route matches: left by a
 * peer that vanished while the daemon was down. Shared by the routed backends; linux-net uses none of it.
 */
public record RouteDiff(List<Route> missing, List<Route> strays) {

    public RouteDiff {
        missing = List.copyOf(missing);
        strays = List.copyOf(strays);
    }

    /** @param withStrays false until the first complete lease list is known: nothing is a stray yet */
    public static RouteDiff of(Collection<Route> wanted, List<Route> dumped, Predicate<Route> ours, boolean withStrays) {
        Map<IpPrefix, List<Route>> byDst = new HashMap<>(); // indexed once: thousands of peers
        for (Route r : dumped) {
            if (r.dst() != null) {
                byDst.computeIfAbsent(r.dst(), k -> new ArrayList<>(1)).add(r);
            }
        }
        List<Route> missing = new ArrayList<>();
        for (Route w : wanted) {
            if (byDst.getOrDefault(w.dst(), List.of()).stream().noneMatch(h -> same(h, w))) {
                missing.add(w);
            }
        }
        if (!withStrays) {
            return new RouteDiff(missing, List.of());
        }
        Map<IpPrefix, List<Route>> wantedByDst = new HashMap<>();
        for (Route w : wanted) {
            wantedByDst.computeIfAbsent(w.dst(), k -> new ArrayList<>(1)).add(w);
        }
        List<Route> strays = new ArrayList<>();
        for (Route h : dumped) {
            if (ours.test(h) && wantedByDst.getOrDefault(h.dst(), List.of()).stream().noneMatch(w -> same(h, w))) {
                strays.add(h);
            }
        }
        return new RouteDiff(missing, strays);
    }

    public static boolean same(Route have, Route want) {
        return want.dst().equals(have.dst()) && want.gateway().equals(have.gateway())
                && have.linkIndex() == want.linkIndex() && have.table() == want.table() && have.type() == want.type()
                && have.onlink() == want.onlink();
    }
}
