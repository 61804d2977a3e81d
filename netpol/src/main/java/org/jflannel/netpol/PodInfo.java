package org.jflannel.netpol;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What policy needs of a Pod: its identity, labels, addresses, node, whether it is on the host's network
 * (then no policy applies to it, nor do selectors pick it), its containers' named ports, and whether it
 * has ended (a Succeeded or Failed pod's addresses may be reused: never a peer).
 */
public record PodInfo(String namespace, String name, Map<String, String> labels, List<Addr> ips, String node,
                      boolean hostNetwork, List<NamedPort> ports, boolean ended) {
    public PodInfo {
        labels = java.util.Collections.unmodifiableMap(new TreeMap<>(labels));
        ips = List.copyOf(ips);
        ports = List.copyOf(ports);
    }

    public String id() {
        return namespace + "/" + name;
    }

    /** Whether policies and selectors see this pod at all. */
    public boolean subject() {
        return !hostNetwork && !ended && !ips.isEmpty();
    }

    /** The container port named {@code name} of {@code protocol} (the first, as the API takes names unique per pod). */
    public Optional<Integer> port(String name, Protocol protocol) {
        return ports.stream().filter(p -> p.name().equals(name) && p.protocol() == protocol).map(NamedPort::port).findFirst();
    }

    /** A container port with a name. */
    public record NamedPort(String name, Protocol protocol, int port) {
        public NamedPort {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("containerPort: expected 1..65535, got " + port);
            }
        }
    }
}
