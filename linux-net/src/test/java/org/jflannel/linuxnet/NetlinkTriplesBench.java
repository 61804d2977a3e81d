package org.jflannel.linuxnet;

import java.net.InetAddress;
import java.util.Locale;
import org.jflannel.core.MacAddress;

/**
 * Benchmark main (not a test), run by bench/netlink-triples.sh inside a scratch namespace: programs N
 * flannel peer triples (neighbour + FDB + onlink route) on a fresh VXLAN device and prints the rate,
 * plus the time spent per kind of entry and per block of 1,000 triples (to see whether it degrades
 * as the tables grow).
 *
 * <p>Usage: {@code NetlinkTriplesBench <N> [warmup]}; it must run in a namespace it may change.
 */
public final class NetlinkTriplesBench {
    private NetlinkTriplesBench() {
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        try (RtNetlink nl = RtNetlink.open()) {
            int ext = underlay(nl);
            if (warmup > 0) {
                run(nl, "warm.1", ext, warmup, false);
            }
            run(nl, "flannel.1", ext, n, true);
        }
    }

    private static int underlay(RtNetlink nl) throws Exception {
        nl.deleteLink("bext0");
        nl.createVeth("bext0", "bext0p");
        int ext = nl.link("bext0").orElseThrow().index();
        nl.addAddress(ext, IpPrefix.parse("192.168.0.1/16"));
        nl.setUp(ext);
        return ext;
    }

    private static void run(RtNetlink nl, String dev, int ext, int n, boolean report) throws Exception {
        nl.deleteLink(dev);
        nl.createVxlan(new VxlanSpec(dev, 1, ext, InetAddress.getByName("192.168.0.1"), 0, false, false, 1450, null));
        int vx = nl.link(dev).orElseThrow().index();
        nl.addAddress(vx, IpPrefix.parse("10.0.0.0/32"));
        nl.setUp(vx);
        long neighNs = 0, fdbNs = 0, routeNs = 0;
        long start = System.nanoTime(), block = start;
        StringBuilder blocks = new StringBuilder();
        for (int i = 0; i < n; i++) {
            InetAddress subnet = InetAddress.getByAddress(new byte[] {10, (byte) (1 + (i >> 8)), (byte) i, 0});
            InetAddress vtep = InetAddress.getByAddress(new byte[] {(byte) 172, (byte) (16 + (i >> 16)), (byte) (i >> 8), (byte) i});
            MacAddress mac = new MacAddress(0x0e0000000000L | i);
            long t0 = System.nanoTime();
            nl.replaceNeighbour(Neighbour.permanent(vx, subnet, mac));
            long t1 = System.nanoTime();
            nl.replaceFdb(new FdbEntry(vx, mac, vtep));
            long t2 = System.nanoTime();
            nl.replaceRoute(Route.onlink(new IpPrefix(subnet, 24), subnet, vx));
            long t3 = System.nanoTime();
            neighNs += t1 - t0;
            fdbNs += t2 - t1;
            routeNs += t3 - t2;
            if ((i + 1) % 5000 == 0) {
                long now = System.nanoTime();
                blocks.append(String.format(Locale.ROOT, " %d:%.0f/s", i + 1, 5000 / ((now - block) / 1e9)));
                block = now;
            }
        }
        double secs = (System.nanoTime() - start) / 1e9;
        if (report) {
            System.out.printf(Locale.ROOT, "java N=%d seconds=%.3f triples_per_s=%.0f neigh_us=%.1f fdb_us=%.1f "
                            + "route_us=%.1f per5000=[%s ]%n", n, secs, n / secs, neighNs / 1e3 / n, fdbNs / 1e3 / n,
                    routeNs / 1e3 / n, blocks);
        }
        nl.deleteLink(dev);
    }
}
