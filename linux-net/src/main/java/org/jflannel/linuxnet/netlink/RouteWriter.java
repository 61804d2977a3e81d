package org.jflannel.linuxnet.netlink;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.jflannel.linuxnet.NetlinkException;
import org.slf4j.Logger;

/**
 * The routed backends' writes for the shared peer loop (host-gw and ipip, whose peers are main-table routes): each
 * route replaced (idempotent, and it moves a route to the same subnet from an old gateway or device), a failure
 * logged at ERROR the first time and at DEBUG while it keeps failing, a repair and a recovery said in one line each,
 * every outcome counted. Log lines go to the backend's logger and name the route as the backend describes it
 * (destination, gateway, device).
 */
public final class RouteWriter {
    private final RtNetlink nl;
    private final Logger log;
    private final Function<Route, String> describe;
    private final Runnable programmed;
    private final Runnable removed;
    private final Runnable failed;

    /**
     * @param describe   the route as the backend's log lines name it, device included
     * @param programmed counts a route written, repairs included
     * @param removed    counts a route deleted
     * @param failed     counts a write or delete the kernel refused
     */
    public RouteWriter(RtNetlink nl, Logger log, Function<Route, String> describe, Runnable programmed, Runnable removed,
                       Runnable failed) {
        this.nl = nl;
        this.log = log;
        this.describe = describe;
        this.programmed = programmed;
        this.removed = removed;
        this.failed = failed;
    }

    /** Writes each route; returns those the kernel refused ({@code failing}: those that failed last time too). */
    public List<Route> write(List<Route> routes, Set<Route> failing) {
        List<Route> refused = new ArrayList<>();
        for (Route r : routes) {
            if (!write(r, failing.contains(r))) {
                refused.add(r);
            }
        }
        return refused;
    }

    /** Writes a route found missing by a read-back; said unless it is still failing from before. */
    public boolean repair(Route r, boolean failedBefore) {
        if (!failedBefore) {
            log.info("route repaired {}", describe.apply(r));
        }
        boolean ok = write(r, failedBefore);
        if (ok && failedBefore) {
            log.info("route added after earlier failure {}", describe.apply(r));
        }
        return ok;
    }

    public void delete(Route r) {
        try {
            nl.deleteRoute(r);
            removed.run();
        } catch (NetlinkException e) {
            failed.run();
            log.error("route delete failed {} error={}", describe.apply(r), e.getMessage());
        }
    }

    private boolean write(Route r, boolean failedBefore) {
        try {
            nl.replaceRoute(r);
            programmed.run();
            return true;
        } catch (NetlinkException e) {
            failed.run();
            if (!failedBefore) {
                log.error("route add failed {} error={}", describe.apply(r), e.getMessage());
            } else {
                log.debug("route add failed again {} error={}", describe.apply(r), e.getMessage());
            }
            return false;
        }
    }
}
