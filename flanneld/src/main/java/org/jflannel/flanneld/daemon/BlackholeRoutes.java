package org.jflannel.flanneld.daemon;

import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jflannel.flanneld.health.Metrics;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --ip-blackhole-route} (REFERENCE §8.6): a blackhole route for each own lease subnet, added
 * when missing, checked every {@code --iptables-resync} seconds (the first check one period after
 * start-up) on the {@code blackhole-route} thread, which owns its netlink socket. "Missing" is judged
 * by destination and route type only.
 */
final class BlackholeRoutes implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BlackholeRoutes.class);

    private final List<IpPrefix> subnets;
    private final Metrics metrics;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "blackhole-route");
        t.setDaemon(true);
        return t;
    });

    BlackholeRoutes(List<IpPrefix> subnets, Metrics metrics) {
        this.subnets = List.copyOf(subnets);
        this.metrics = metrics;
    }

    void start(int periodSeconds) {
        int period = Math.max(1, periodSeconds);
        timer.scheduleWithFixedDelay(this::checkQuietly, period, period, TimeUnit.SECONDS);
    }

    private void checkQuietly() {
        try (RtNetlink nl = RtNetlink.open()) {
            ensure(nl);
        } catch (NetlinkException | RuntimeException e) {
            metrics.error("blackhole");
            LOG.error("blackhole route check failed error={}", e.getMessage());
        }
    }

    /** Adds the missing blackhole routes; returns how many were added. */
    int ensure(RtNetlink nl) throws NetlinkException {
        int added = 0;
        for (IpPrefix subnet : subnets) {
            List<Route> sameDst = nl.routes(subnet.isIpv4() ? 2 : 10, Route.TABLE_MAIN).stream()
                    .filter(r -> subnet.equals(r.dst())).toList();
            if (sameDst.stream().anyMatch(r -> r.type() == Route.TYPE_BLACKHOLE)) {
                continue;
            }
            if (!sameDst.isEmpty()) { // upstream's RouteAdd fails with EEXIST here; we never replace another route
                LOG.error("blackhole route not added: another route has that destination subnet={}", subnet);
                metrics.error("blackhole");
                continue;
            }
            nl.replaceRoute(Route.blackhole(subnet));
            LOG.info("blackhole route added subnet={}", subnet);
            metrics.addRepairs("blackhole", 1);
            added++;
        }
        return added;
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
