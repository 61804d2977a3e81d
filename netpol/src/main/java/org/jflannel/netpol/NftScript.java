package org.jflannel.netpol;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.stream.Collectors;
import org.jflannel.netpol.NodeRules.AddrSet;
import org.jflannel.netpol.NodeRules.Allow;
import org.jflannel.netpol.NodeRules.AnyPeer;
import org.jflannel.netpol.NodeRules.BlockPeer;
import org.jflannel.netpol.NodeRules.FromOrTo;
import org.jflannel.netpol.NodeRules.PodChain;
import org.jflannel.netpol.NodeRules.PortRange;
import org.jflannel.netpol.NodeRules.PortSet;
import org.jflannel.netpol.NodeRules.SetPeer;
import org.jflannel.netpol.NodeRules.ToNamedPort;

/**
 * {@link NodeRules} as an {@code nft -f} script that replaces the table {@value #TABLE} in one transaction
 * (the kernel applies all of it or none: no moment in which an isolated pod is open). The table's base
 * chain sits on the forward hook, which sees pod-to-pod traffic of every backend (flannel.1, flannel0,
 * flannel-wg, host-gw routes) and, with br_netfilter, same-node traffic across cni0; traffic between a
 * pod and its own node goes through input and output instead, so it always passes (kubelet's probes).
 * Packets of established connections are accepted first, and IPv6 neighbour discovery (IPv4's ARP is no IP
 * packet and never reaches these hooks); the others are dispatched by address, through
 * verdict maps, to the chain of the isolated pod they enter or leave, which returns what it allows and
 * drops the rest.
 */
public final class NftScript {
    /** Our one table (family inet: both IPv4 and IPv6). */
    public static final String TABLE = "jflannel-netpol";

    private NftScript() {
    }

    /** The whole table, replacing whatever it held. */
    public static String replace(NodeRules rules) {
        StringBuilder sb = new StringBuilder();
        sb.append("add table inet ").append(TABLE).append('\n');
        sb.append("delete table inet ").append(TABLE).append('\n');
        sb.append("table inet ").append(TABLE).append(" {\n");
        for (AddrSet s : rules.sets().values()) {
            sb.append("  set ").append(s.name()).append(" { type ").append(addrType(s.family())).append(';')
                    .append(elements(s.elements().stream().map(Addr::toString).toList())).append(" }\n");
        }
        for (PortSet s : rules.portSets().values()) {
            sb.append("  set ").append(s.name()).append(" { type ").append(addrType(s.family()))
                    .append(" . inet_proto . inet_service;").append(elements(s.elements().stream()
                            .map(e -> e.addr() + " . " + e.protocol().nft() + " . " + e.port()).toList())).append(" }\n");
        }
        for (Direction d : Direction.values()) {
            for (int family : new int[] {4, 6}) {
                List<String> jumps = new ArrayList<>();
                for (PodChain c : rules.chains()) {
                    if (c.direction() == d) {
                        c.addresses().stream().filter(a -> a.family() == family).forEach(a -> jumps.add(a + " : jump " + c.name()));
                    }
                }
                sb.append("  map ").append(dispatch(d, family)).append(" { type ").append(addrType(family))
                        .append(" : verdict;").append(elements(jumps)).append(" }\n");
            }
        }
        sb.append("  chain forward {\n    type filter hook forward priority filter; policy accept;\n")
                .append("    ct state established,related accept\n")
                // neighbour discovery is how IPv6 finds a neighbour's link address, as ARP is for IPv4 (which
                // netfilter's ip hooks never see): an isolated pod must still answer it and hear the answers
                .append("    icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-solicit, nd-router-advert } accept\n");
        for (Direction d : Direction.values()) {
            for (int family : new int[] {4, 6}) {
                sb.append("    ").append(family == 4 ? "ip " : "ip6 ").append(d == Direction.INGRESS ? "daddr" : "saddr")
                        .append(" vmap @").append(dispatch(d, family)).append('\n');
            }
        }
        sb.append("  }\n");
        for (PodChain c : rules.chains()) {
            sb.append("  chain ").append(c.name()).append(" {\n");
            sb.append("    comment \"").append(c.direction().name().toLowerCase(java.util.Locale.ROOT)).append(' ')
                    .append(c.pod()).append("\"\n");
            for (Allow a : c.allows()) {
                for (String line : lines(c.direction(), a)) {
                    sb.append("    ").append(line).append(" return\n");
                }
            }
            sb.append("    counter drop\n  }\n");
        }
        return sb.append("}\n").toString();
    }

    /** The verdict map that sends a direction's packets of one family to their pod's chain. */
    static String dispatch(Direction d, int family) {
        return (d == Direction.INGRESS ? "ingress" : "egress") + family;
    }

    /** The matches of one allow, one line per family it concerns. */
    static List<String> lines(Direction d, Allow a) {
        String peerField = d == Direction.INGRESS ? "saddr" : "daddr";
        if (a instanceof ToNamedPort np) {
            return List.of("ip daddr . meta l4proto . th dport @" + np.set4(), "ip6 daddr . meta l4proto . th dport @" + np.set6());
        }
        FromOrTo f = (FromOrTo) a;
        String ports = ports(f.ports());
        if (f.peer() instanceof AnyPeer) {
            return List.of(ports.isEmpty() ? "meta nfproto { ipv4, ipv6 }" : ports.strip());
        }
        if (f.peer() instanceof SetPeer s) {
            return List.of("ip " + peerField + " @" + s.set4() + ports, "ip6 " + peerField + " @" + s.set6() + ports);
        }
        PolicyPeer.IpBlock b = ((BlockPeer) f.peer()).block();
        String ip = b.cidr().family() == 4 ? "ip " : "ip6 ";
        String except = b.except().isEmpty() ? ""
                : " " + ip + peerField + " != { " + b.except().stream().map(Cidr::toString).collect(Collectors.joining(", ")) + " }";
        return List.of(ip + peerField + " " + b.cidr() + except + ports);
    }

    private static String ports(List<PortRange> ranges) {
        if (ranges.isEmpty()) {
            return "";
        }
        return " meta l4proto . th dport { " + ranges.stream().map(r -> r.protocol().nft() + " . "
                + (r.from() == r.to() ? Integer.toString(r.from()) : r.from() + "-" + r.to())).distinct()
                .collect(Collectors.joining(", ")) + " }";
    }

    private static String addrType(int family) {
        return family == 4 ? "ipv4_addr" : "ipv6_addr";
    }

    private static String elements(Collection<String> elements) {
        return elements.isEmpty() ? "" : " elements = { " + String.join(", ", elements) + " };";
    }
}
