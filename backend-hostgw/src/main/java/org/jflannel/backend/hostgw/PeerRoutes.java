package org.jflannel.backend.hostgw;

import java.util.List;
import java.util.Objects;
import org.jflannel.core.Lease;
import org.jflannel.linuxnet.netlink.Route;

/**
 * What one peer lease asks of the kernel: a route per address family both it and we have (0..2),
 * and the families refused (its public IP not on our L2), one reason each.
 */
record PeerRoutes(Lease lease, List<Route> routes, List<String> refusals) {
    PeerRoutes {
        Objects.requireNonNull(lease, "lease");
        routes = List.copyOf(routes);
        refusals = List.copyOf(refusals);
    }

    /** For logs: {@code subnet=10.244.3.0/24 via=192.0.2.12}. */
    static String describe(Route r) {
        return "subnet=" + r.dst() + " via=" + r.gateway().getHostAddress();
    }
}
