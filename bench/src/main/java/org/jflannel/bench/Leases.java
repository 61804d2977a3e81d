package org.jflannel.bench;

import java.net.Inet4Address;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.MacAddress;

/**
 * Realistic peer leases for the benchmarks: node {@code i} has {@code 10.<128+i/256>.<i%256>.0/24}
 * of a {@code 10.128.0.0/9} network (a /16 holds only 256 nodes), a public IP in 172.16.0.0/12 and
 * the vxlan backend data exactly as upstream flanneld writes it.
 */
public final class Leases {
    /** The cluster size the benchmarks use (REFERENCE's large-cluster figure). */
    public static final int NODES = 2000;

    private static final Instant EXPIRES = Instant.parse("2026-11-23T12:00:00Z");

    private Leases() {
    }

    /** Node {@code i}'s lease; {@code generation} changes the VTEP MAC, as a node that re-registered. */
    public static Lease vxlan(int i, int generation) {
        Ip4Net subnet = new Ip4Net((10 << 24) | ((128 + i / 256) << 16) | ((i % 256) << 8), 24);
        Inet4Address publicIp = Ip4Net.toInet((172 << 24) | (16 << 16) | ((i / 250) << 8) | (i % 250 + 1));
        MacAddress mac = new MacAddress(0x0e0000000000L | ((long) generation << 16) | i);
        String data = "{\"VNI\":1,\"VtepMAC\":\"" + mac + "\"}";
        return new Lease(subnet, null, new LeaseAttrs(publicIp, null, "vxlan", data, null), EXPIRES);
    }

    /** The own lease: a subnet none of the peers has. */
    public static Lease own() {
        return vxlan(NODES, 0);
    }

    /** Leases of nodes 0..n-1. */
    public static List<Lease> all(int n, int generation) {
        List<Lease> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(vxlan(i, generation));
        }
        return List.copyOf(out);
    }

    /** One ADDED event per lease, as a watch delivers a burst. */
    public static List<LeaseEvent> added(List<Lease> leases) {
        List<LeaseEvent> out = new ArrayList<>(leases.size());
        for (Lease l : leases) {
            out.add(LeaseEvent.added(l));
        }
        return List.copyOf(out);
    }
}
