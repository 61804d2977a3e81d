package org.jflannel.subnet.kube;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.jflannel.core.ConfigException;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.util.List;

/**
 * Turns a node into a lease as upstream's {@code nodeToLease} does (REFERENCE §4.4), for the enabled
 * address families. Pure; every problem is a {@link ConfigException} naming the node's field, so the
 * caller can skip the node with one log line.
 */
final class NodeLeases {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final KubeAnnotations keys;
    private final boolean ipv4;
    private final boolean ipv6;

    NodeLeases(KubeAnnotations keys, boolean ipv4, boolean ipv6) {
        this.keys = keys;
        this.ipv4 = ipv4;
        this.ipv6 = ipv6;
    }

    /** Whether the node runs flannel's kube subnet manager ({@code kube-subnet-manager: "true"}). */
    boolean managed(NodeView n) {
        return "true".equals(n.annotation(keys.subnetKubeManaged()));
    }

    /**
     * Whether an update of a managed node yields an event: the backend data, backend type or public IP
     * of IPv4 <em>or</em> of IPv6 changed (Ours: upstream needs every enabled family to change), or
     * the node just became managed.
     */
    boolean changed(NodeView before, NodeView after) {
        boolean v4 = ipv4 && differs(before, after, keys.backendData(), keys.backendType(), keys.publicIp());
        boolean v6 = ipv6 && differs(before, after, keys.backendV6Data(), keys.backendType(), keys.publicIpv6());
        return v4 || v6 || (!managed(before) && managed(after));
    }

    private static boolean differs(NodeView a, NodeView b, String... annotationKeys) {
        for (String k : annotationKeys) {
            if (!a.annotation(k).equals(b.annotation(k))) {
                return true;
            }
        }
        return false;
    }

    /** The node's lease; the error names the field (annotation key or {@code spec.podCIDRs}). */
    Lease toLease(NodeView n) throws ConfigException {
        PodCidrs cidrs = PodCidrs.of(n);
        Inet4Address publicIp = null;
        String data = null;
        if (ipv4) {
            publicIp = ipv4Annotation(n, keys.publicIp());
            data = backendData(n, keys.backendData());
            if (cidrs.ipv4() == null) {
                throw new ConfigException("spec.podCIDRs", "missing IPv4 address on n.Spec.PodCIDRs");
            }
        }
        Inet6Address publicIpv6 = null;
        String v6Data = null;
        if (ipv6) {
            publicIpv6 = ipv6Annotation(n, keys.publicIpv6());
            v6Data = backendData(n, keys.backendV6Data());
            if (cidrs.ipv6() == null) {
                throw new ConfigException("spec.podCIDRs", "missing IPv6 address on n.Spec.PodCIDRs");
            }
        }
        LeaseAttrs attrs = new LeaseAttrs(publicIp, publicIpv6, n.annotation(keys.backendType()), data, v6Data);
        return new Lease(ipv4 ? cidrs.ipv4() : null, ipv6 ? cidrs.ipv6() : null, attrs, null);
    }

    private static Inet4Address ipv4Annotation(NodeView n, String key) throws ConfigException {
        String v = n.annotation(key);
        if (v.isEmpty()) {
            throw new ConfigException(key, "annotation " + key + " is missing");
        }
        try {
            return Ip4Net.toInet(Ip4Net.parseAddress(v));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(key, "annotation " + key + ": not an IPv4 address: \"" + v + "\"", e);
        }
    }

    private static Inet6Address ipv6Annotation(NodeView n, String key) throws ConfigException {
        String v = n.annotation(key);
        if (v.isEmpty()) {
            throw new ConfigException(key, "annotation " + key + " is missing");
        }
        try {
            long[] a = Ip6Net.parseAddress(v);
            return Ip6Net.toInet(a[0], a[1]);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(key, "annotation " + key + ": not an IPv6 address: \"" + v + "\"", e);
        }
    }

    /** Raw backend JSON ("" → null); it must at least be JSON, since backends decode it later. */
    private static String backendData(NodeView n, String key) throws ConfigException {
        String v = n.annotation(key);
        if (v.isEmpty()) {
            return null;
        }
        try {
            JSON.readTree(v);
            return v;
        } catch (JsonProcessingException e) {
            throw new ConfigException(key, "annotation " + key + ": invalid JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** The node's IPv4 and IPv6 pod CIDRs, from {@code spec.podCIDRs}, else {@code spec.podCIDR}. */
    record PodCidrs(Ip4Net ipv4, Ip6Net ipv6) {

        static PodCidrs of(NodeView n) throws ConfigException {
            List<String> list = n.podCidrs();
            String field = "spec.podCIDRs";
            if (list.isEmpty()) {
                list = n.podCidr().isEmpty() ? List.of() : List.of(n.podCidr());
                field = "spec.podCIDR";
            }
            if (list.size() > 2) {
                throw new ConfigException("spec.podCIDRs",
                        "node \"" + n.name() + "\" pod cidrs should be IPv4/IPv6 only or dualstack");
            }
            Ip4Net v4 = null;
            Ip6Net v6 = null;
            for (String cidr : list) {
                try {
                    if (cidr.indexOf(':') >= 0) {
                        v6 = v6 == null ? Ip6Net.parse(cidr) : v6;
                    } else {
                        v4 = v4 == null ? Ip4Net.parse(cidr) : v4;
                    }
                } catch (IllegalArgumentException e) {
                    throw new ConfigException(field, field + ": invalid CIDR address: " + cidr, e);
                }
            }
            return new PodCidrs(v4, v6);
        }
    }
}
