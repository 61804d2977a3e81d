package org.jflannel.linuxnet.netlink;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.util.Locale;
import org.jflannel.core.MacAddress;

/**
 * Benchmark main (not a test), run by bench/netlink-triples.sh inside a scratch namespace: programs N
 * flannel peer triples (neighbour + FDB + onlink route) on a fresh VXLAN device and prints the rate,
 * plus the time spent per kind of entry and per block of 1,000 triples (to see whether it degrades
 * as the tables grow).
 *
 * <p>Usage: {@code NetlinkTriplesBench <N> [warmup] [triples|pairs|grouped]}; it must run in a namespace it may change.
 * {@code grouped} programs neighbour + route per peer and then all FDB entries (the order of the batch files).
 * With {@code pairs} it programs only neighbour + FDB entries (no routes), which isolates the cost of
 * our request path from the kernel's route insertion.
 */
public final class NetlinkTriplesBench {
    /** "grouped": neighbour + route per peer, then all FDB entries, the order of the ip/bridge batch files. */
    private static boolean grouped;
    /** "pipelined": all neighbours + FDB entries in one {@link Batch}, then all routes in a second (backend-vxlan's bulk path). */
    private static boolean pipelined;

    private NetlinkTriplesBench() {
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        String mode = args.length > 2 ? args[2] : "triples";
        boolean routes = !mode.equals("pairs");
        grouped = mode.equals("grouped");
        pipelined = mode.startsWith("pipelined");
        routes = routes && !mode.equals("pipelined-pairs");
        try (RtNetlink nl = RtNetlink.open()) {
            int ext = underlay(nl);
            if (warmup > 0) {
                run(nl, "warm.1", ext, warmup, routes, false);
            }
            run(nl, "flannel.1", ext, n, routes, true);
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

    private static void run(RtNetlink nl, String dev, int ext, int n, boolean routes, boolean report) throws Exception {
        nl.deleteLink(dev);
        nl.createVxlan(new VxlanSpec(dev, 1, ext, InetAddress.getByName("192.168.0.1"), 0, false, false, 1450, null));
        int vx = nl.link(dev).orElseThrow().index();
        nl.addAddress(vx, IpPrefix.parse("10.0.0.0/32"));
        nl.setUp(vx);
        long neighNs = 0, fdbNs = 0, routeNs = 0;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = threads.getCurrentThreadCpuTime();
        long procCpu0 = os.getProcessCpuTime();
        long start = System.nanoTime(), block = start;
        StringBuilder blocks = new StringBuilder();
        if (pipelined) {
            long[] ns = pipelined(nl, vx, n, routes);
            neighNs = ns[0];
            routeNs = ns[1];
        }
        for (int i = 0; i < (pipelined ? 0 : n); i++) {
            InetAddress subnet = InetAddress.getByAddress(new byte[] {10, (byte) (1 + (i >> 8)), (byte) i, 0});
            InetAddress vtep = InetAddress.getByAddress(new byte[] {(byte) 172, (byte) (16 + (i >> 16)), (byte) (i >> 8), (byte) i});
            MacAddress mac = new MacAddress(0x0e0000000000L | i);
            long t0 = System.nanoTime();
            nl.replaceNeighbour(Neighbour.permanent(vx, subnet, mac));
            long t1 = System.nanoTime();
            if (!grouped) {
                nl.replaceFdb(new FdbEntry(vx, mac, vtep));
            }
            long t2 = System.nanoTime();
            if (routes) {
                nl.replaceRoute(Route.onlink(new IpPrefix(subnet, 24), subnet, vx));
            }
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
        if (grouped) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                InetAddress vtep = InetAddress.getByAddress(new byte[] {(byte) 172, (byte) (16 + (i >> 16)), (byte) (i >> 8), (byte) i});
                nl.replaceFdb(new FdbEntry(vx, new MacAddress(0x0e0000000000L | i), vtep));
            }
            fdbNs = System.nanoTime() - t0;
        }
        double secs = (System.nanoTime() - start) / 1e9;
        // CPU time is what the machine's other load cannot inflate: the sender thread's (user + kernel,
        // which includes the kernel's work on our requests) and the whole JVM's (adds JIT and GC).
        double cpu = (threads.getCurrentThreadCpuTime() - cpu0) / 1e9;
        double procCpu = (os.getProcessCpuTime() - procCpu0) / 1e9;
        if (report) {
            String name = (pipelined ? "java-pipelined" : grouped ? "java-grouped" : "java") + (routes ? "" : "-pairs");
            System.out.printf(Locale.ROOT, name + " N=%d wall_s=%.3f triples_per_s=%.0f cpu_s=%.3f (jvm %.3f) "
                            + "triples_per_cpu_s=%.0f neigh_us=%.1f fdb_us=%.1f route_us=%.1f per5000=[%s ]%n", n, secs,
                    n / secs, cpu, procCpu, n / cpu, neighNs / 1e3 / n, fdbNs / 1e3 / n, routeNs / 1e3 / n, blocks);
        }
        nl.deleteLink(dev);
    }

    /** Returns the nanoseconds of the neighbour + FDB batch and of the route batch (reported as neigh_us, route_us). */
    private static long[] pipelined(RtNetlink nl, int vx, int n, boolean routes) throws Exception {
        long t0 = System.nanoTime();
        Batch pairs = nl.batch();
        Batch routeBatch = nl.batch();
        for (int i = 0; i < n; i++) {
            InetAddress subnet = InetAddress.getByAddress(new byte[] {10, (byte) (1 + (i >> 8)), (byte) i, 0});
            InetAddress vtep = InetAddress.getByAddress(new byte[] {(byte) 172, (byte) (16 + (i >> 16)), (byte) (i >> 8), (byte) i});
            MacAddress mac = new MacAddress(0x0e0000000000L | i);
            pairs.replaceNeighbour(Neighbour.permanent(vx, subnet, mac));
            pairs.replaceFdb(new FdbEntry(vx, mac, vtep));
            routeBatch.replaceRoute(Route.onlink(new IpPrefix(subnet, 24), subnet, vx));
        }
        BatchResult r1 = pairs.execute();
        long t1 = System.nanoTime();
        BatchResult r2 = routes ? routeBatch.execute() : null;
        long t2 = System.nanoTime();
        if (r1.failures() > 0 || (r2 != null && r2.failures() > 0)) {
            throw new IllegalStateException("batch failures: " + r1.errors() + (r2 == null ? "" : " " + r2.errors()));
        }
        return new long[] {t1 - t0, t2 - t1};
    }
}
