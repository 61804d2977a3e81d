package org.jflannel.subnet.etcd;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.random.RandomGenerator;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.NetConf;

/**
 * The pure part of choosing a subnet in etcd mode (REFERENCE §5.4): which leases fit the network
 * configuration, and a random free subnet among the first {@value #CANDIDATES} free ones between
 * SubnetMin and SubnetMax (and likewise for IPv6), as upstream's {@code allocateSubnet} does.
 */
final class SubnetAllocator {
    static final int CANDIDATES = 100;

    private final NetConf conf;
    private final RandomGenerator random;

    SubnetAllocator(NetConf conf, RandomGenerator random) {
        this.conf = conf;
        this.random = random;
    }

    /** Whether a lease with these subnets suits this configuration (right stacks, lengths and ranges). */
    boolean compatible(Ip4Net v4, Ip6Net v6) {
        if (conf.enableIPv4() != (v4 != null) || conf.enableIPv6() != (v6 != null)) {
            return false;
        }
        return (v4 == null || conf.allocatable(v4)) && (v6 == null || conf.allocatable(v6));
    }

    /** A random free IPv4 subnet, or empty when every one between SubnetMin and SubnetMax is taken. */
    Optional<Ip4Net> free4(Collection<Ip4Net> taken) {
        Set<Ip4Net> sameLength = new HashSet<>();
        List<Ip4Net> others = new ArrayList<>();
        for (Ip4Net t : taken) {
            (t.prefixLength() == conf.subnetLen() ? sameLength : others).add(t);
        }
        List<Ip4Net> avail = new ArrayList<>();
        Ip4Net sn = conf.subnetMin();
        // unsigned walk: stop at SubnetMax, or if next() wrapped around past 255.255.255.255
        while (avail.size() < CANDIDATES && sn.compareTo(conf.subnetMax()) <= 0) {
            Ip4Net candidate = sn;
            if (!sameLength.contains(candidate) && others.stream().noneMatch(candidate::overlaps)) {
                avail.add(candidate);
            }
            Ip4Net next = sn.next();
            if (next.compareTo(sn) <= 0) {
                break;
            }
            sn = next;
        }
        return avail.isEmpty() ? Optional.empty() : Optional.of(avail.get(random.nextInt(avail.size())));
    }

    /** A random free IPv6 subnet, or empty when none is free. */
    Optional<Ip6Net> free6(Collection<Ip6Net> taken) {
        Set<Ip6Net> sameLength = new HashSet<>();
        List<Ip6Net> others = new ArrayList<>();
        for (Ip6Net t : taken) {
            (t.prefixLength() == conf.ipv6SubnetLen() ? sameLength : others).add(t);
        }
        List<Ip6Net> avail = new ArrayList<>();
        Ip6Net sn = conf.ipv6SubnetMin();
        while (avail.size() < CANDIDATES && sn.compareTo(conf.ipv6SubnetMax()) <= 0) {
            Ip6Net candidate = sn;
            if (!sameLength.contains(candidate) && others.stream().noneMatch(candidate::overlaps)) {
                avail.add(candidate);
            }
            Ip6Net next = sn.next();
            if (next.compareTo(sn) <= 0) {
                break;
            }
            sn = next;
        }
        return avail.isEmpty() ? Optional.empty() : Optional.of(avail.get(random.nextInt(avail.size())));
    }

    /** Whether {@code v4}/{@code v6} overlap none of the taken subnets. */
    static boolean isFree(Ip4Net v4, Ip6Net v6, Collection<Ip4Net> taken4, Collection<Ip6Net> taken6) {
        return (v4 == null || taken4.stream().noneMatch(v4::overlaps))
                && (v6 == null || taken6.stream().noneMatch(v6::overlaps));
    }
}
