package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.jflannel.core.MacAddress;
import org.jflannel.linuxnet.TestNs;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("netns")
class MonitorIT {
    private static final MacAddress PEER_MAC = MacAddress.parse("0e:00:00:00:02:02");

    @Test
    void reportsNeighbourFdbRouteAndLinkDeleteEvents() throws Exception {
        try (TestNs t = TestNs.create("mon")) {
            BlockingQueue<NetlinkEvent> events = new LinkedBlockingQueue<>();
            t.ns.run(() -> {
                try (RtNetlink nl = RtNetlink.open();
                     NetlinkMonitor m = NetlinkMonitor.start("test-linkwatch", EnumSet.allOf(NetlinkMonitor.Group.class),
                             events::add)) {
                    VxlanNode node = VxlanNode.setUp(nl);
                    await(events, e -> e instanceof NetlinkEvent.LinkEvent l && !l.deleted()
                            && l.link().name().equals("flannel.1") && l.link().vxlan() != null);
                    await(events, e -> e instanceof NetlinkEvent.AddressEvent a && !a.deleted()
                            && a.address().prefix().equals(IpPrefix.parse("10.244.1.0/32")));

                    Neighbour n = Neighbour.permanent(node.vxlan, InetAddress.getByName("10.244.2.0"), PEER_MAC);
                    nl.replaceNeighbour(n);
                    await(events, e -> e instanceof NetlinkEvent.NeighbourEvent ne && !ne.deleted()
                            && ne.neighbour().equals(n));
                    FdbEntry f = new FdbEntry(node.vxlan, PEER_MAC, InetAddress.getByName("192.0.2.2"));
                    nl.replaceFdb(f);
                    await(events, e -> e instanceof NetlinkEvent.FdbEvent fe && !fe.deleted() && fe.entry().equals(f));
                    Route r = Route.onlink(IpPrefix.parse("10.244.2.0/24"), n.ip(), node.vxlan);
                    nl.replaceRoute(r);
                    await(events, e -> e instanceof NetlinkEvent.RouteEvent re && !re.deleted() && re.route().equals(r));
                    nl.deleteRoute(r);
                    await(events, e -> e instanceof NetlinkEvent.RouteEvent re && re.deleted() && re.route().equals(r));
                    nl.deleteNeighbour(n);
                    await(events, e -> e instanceof NetlinkEvent.NeighbourEvent ne && ne.deleted()
                            && ne.neighbour().ip().equals(n.ip()));

                    nl.deleteLink("flannel.1");
                    await(events, e -> e instanceof NetlinkEvent.LinkEvent l && l.deleted()
                            && l.link().index() == node.vxlan);
                }
            });
            // close() stops and joins the named reader thread
            assertThat(Thread.getAllStackTraces().keySet()).noneMatch(th -> th.getName().equals("test-linkwatch"));
        }
    }

    /** Bounded wait for a matching event (other events are consumed on the way). */
    private static void await(BlockingQueue<NetlinkEvent> q, Predicate<NetlinkEvent> p) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            NetlinkEvent e = left > 0 ? q.poll(left, TimeUnit.NANOSECONDS) : null;
            assertThat(e).as("a matching netlink event within 5 s").isNotNull();
            if (p.test(e)) {
                return;
            }
        }
    }
}
