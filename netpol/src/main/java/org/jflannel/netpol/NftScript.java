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
import org.jflannel.netpol.NodeRules.Peer;
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
 * drops the rest, counting it in the named counter of its direction ({@link #dropCounter}).
 */
public final class NftScript {
    /** Our one table (family inet: both IPv4 and IPv6). */
    public static final String TABLE = "jflannel-netpol";

    private NftScript() {
    }

    /** The whole table, replacing whatever it held, nothing logged. */
    public static String replace(NodeRules rules) {
        return replace(rules, DenyLog.OFF);
    }

    /** The whole table, replacing whatever it held; the packets its chains drop logged as {@code log} says. */
    public static String replace(NodeRules rules, DenyLog log) {
        StringBuilder sb = new StringBuilder();
        sb.append("add table inet ").append(TABLE).append('\n');
        sb.append("delete table inet ").append(TABLE).append('\n');
        sb.append("table inet ").append(TABLE).append(" {\n");
        for (Direction d : Direction.values()) {
            sb.append("  counter ").append(dropCounter(d)).append(" { }\n");
        }
        if (log.on()) {
            sb.append("  ").append(log.limitDeclaration()).append('\n');
        }
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
            sb.append("    comment ").append(comment(c)).append('\n');
            for (String rule : rules(c, log)) {
                sb.append("    ").append(rule).append('\n');
            }
            sb.append("  }\n");
        }
        return sb.append("}\n").toString();
    }

    /**
     * The commands that turn the table {@code old} describes (as loaded: by {@link #replace} or by earlier updates)
     * into {@code now}'s, as one transaction: new sets and their elements, new chains, changed chains flushed and
     * refilled, the verdict maps' elements, then the chains and sets nothing uses any more. A pod's label change
     * is a few set elements; a pod's own rules, one chain. Empty when nothing changed.
     */
    public static String update(NodeRules old, NodeRules now) {
        return update(old, now, DenyLog.OFF);
    }

    /** As {@link #update(NodeRules, NodeRules)} for a table loaded with {@code log} (by {@link #replace(NodeRules, DenyLog)}). */
    public static String update(NodeRules old, NodeRules now, DenyLog log) {
        StringBuilder sb = new StringBuilder();
        String t = " inet " + TABLE + " ";
        for (AddrSet s : now.sets().values()) {
            AddrSet was = old.sets().get(s.name());
            if (was == null) {
                sb.append("add set").append(t).append(s.name()).append(" { type ").append(addrType(s.family())).append("; }\n");
            }
            elementChanges(sb, t, s.name(), was == null ? List.of() : strings(was.elements()), strings(s.elements()));
        }
        for (PortSet s : now.portSets().values()) {
            PortSet was = old.portSets().get(s.name());
            if (was == null) {
                sb.append("add set").append(t).append(s.name()).append(" { type ").append(addrType(s.family()))
                        .append(" . inet_proto . inet_service; }\n");
            }
            elementChanges(sb, t, s.name(), was == null ? List.of() : portStrings(was), portStrings(s));
        }
        java.util.Map<String, PodChain> oldChains = new java.util.HashMap<>();
        old.chains().forEach(c -> oldChains.put(c.name(), c));
        java.util.Set<String> nowChains = new java.util.HashSet<>();
        for (PodChain c : now.chains()) {
            nowChains.add(c.name());
            PodChain was = oldChains.get(c.name());
            if (was != null && was.allows().equals(c.allows()) && was.pod().equals(c.pod())) {
                continue;
            }
            if (was == null) {
                sb.append("add chain").append(t).append(c.name()).append(" { comment ").append(comment(c)).append("; }\n");
            } else {
                sb.append("flush chain").append(t).append(c.name()).append('\n');
            }
            for (String rule : rules(c, log)) {
                sb.append("add rule").append(t).append(c.name()).append(' ').append(rule).append('\n');
            }
        }
        for (Direction d : Direction.values()) {
            for (int family : new int[] {4, 6}) {
                java.util.Map<String, String> was = jumps(old, d, family);
                java.util.Map<String, String> is = jumps(now, d, family);
                List<String> gone = new ArrayList<>();
                List<String> added = new ArrayList<>();
                was.forEach((addr, chain) -> {
                    if (!chain.equals(is.get(addr))) {
                        gone.add(addr);
                    }
                });
                is.forEach((addr, chain) -> {
                    if (!chain.equals(was.get(addr))) {
                        added.add(addr + " : jump " + chain);
                    }
                });
                String map = dispatch(d, family);
                if (!gone.isEmpty()) {
                    sb.append("delete element").append(t).append(map).append(" { ").append(String.join(", ", gone)).append(" }\n");
                }
                if (!added.isEmpty()) {
                    sb.append("add element").append(t).append(map).append(" { ").append(String.join(", ", added)).append(" }\n");
                }
            }
        }
        for (PodChain c : old.chains()) {
            if (!nowChains.contains(c.name())) {
                sb.append("delete chain").append(t).append(c.name()).append('\n');
            }
        }
        for (String name : old.sets().keySet()) {
            if (!now.sets().containsKey(name)) {
                sb.append("delete set").append(t).append(name).append('\n');
            }
        }
        for (String name : old.portSets().keySet()) {
            if (!now.portSets().containsKey(name)) {
                sb.append("delete set").append(t).append(name).append('\n');
            }
        }
        return sb.toString();
    }

    private static void elementChanges(StringBuilder sb, String t, String set, List<String> was, List<String> is) {
        java.util.Set<String> before = new java.util.LinkedHashSet<>(was);
        java.util.Set<String> after = new java.util.LinkedHashSet<>(is);
        List<String> gone = was.stream().filter(e -> !after.contains(e)).toList();
        List<String> added = is.stream().filter(e -> !before.contains(e)).toList();
        if (!gone.isEmpty()) {
            sb.append("delete element").append(t).append(set).append(" { ").append(String.join(", ", gone)).append(" }\n");
        }
        if (!added.isEmpty()) {
            sb.append("add element").append(t).append(set).append(" { ").append(String.join(", ", added)).append(" }\n");
        }
    }

    private static List<String> strings(java.util.SortedSet<Addr> elements) {
        return elements.stream().map(Addr::toString).toList();
    }

    private static List<String> portStrings(PortSet s) {
        return s.elements().stream().map(e -> e.addr() + " . " + e.protocol().nft() + " . " + e.port()).toList();
    }

    /** A direction's verdict-map elements of one family: address to chain. */
    private static java.util.Map<String, String> jumps(NodeRules r, Direction d, int family) {
        java.util.Map<String, String> m = new java.util.TreeMap<>();
        for (PodChain c : r.chains()) {
            if (c.direction() == d) {
                c.addresses().stream().filter(a -> a.family() == family).forEach(a -> m.put(a.toString(), c.name()));
            }
        }
        return m;
    }

    /** A chain's rules: one {@code return} per allowed match, then (within the limit) the log, then the drop. */
    static List<String> rules(PodChain c, DenyLog log) {
        List<String> out = new ArrayList<>();
        for (String line : matches(c.direction(), c.allows())) {
            out.add(line + " return");
        }
        if (log.on()) {
            out.add(log.rule(c.direction()));
        }
        out.add("counter name " + dropCounter(c.direction()) + " drop");
        return out;
    }

    /** The named counter of the packets the chains of {@code d} drop ({@code dropped_ingress}, {@code dropped_egress}). */
    public static String dropCounter(Direction d) {
        return "dropped_" + d.name().toLowerCase(java.util.Locale.ROOT);
    }

    private static String comment(PodChain c) {
        return "\"" + c.direction().name().toLowerCase(java.util.Locale.ROOT) + " " + c.pod() + "\"";
    }

    /** The verdict map that sends a direction's packets of one family to their pod's chain. */
    static String dispatch(Direction d, int family) {
        return (d == Direction.INGRESS ? "ingress" : "egress") + family;
    }

    /**
     * The matches of a chain's allows, as few lines as mean the same (a new connection's first packet walks them in
     * turn: 100 policies selecting a pod are hundreds of allows, most sharing a peer): the allows of one peer (a
     * selector's set, any address, an ipBlock with exceptions) in one line with the union of their ports (any port
     * if one of them has none); ipBlocks without exceptions of one family and the same ports in one line, their CIDRs
     * in one anonymous set (those inside another left out: an interval set takes no overlaps); a named port's line
     * once. The union of what the lines match is the union of what the allows match.
     */
    static List<String> matches(Direction d, List<Allow> allows) {
        java.util.Map<Peer, List<PortRange>> byPeer = new java.util.LinkedHashMap<>();
        java.util.Set<Peer> anyPort = new java.util.HashSet<>();
        java.util.Map<String, List<Cidr>> blocks = new java.util.LinkedHashMap<>();
        java.util.Map<String, List<PortRange>> blockPorts = new java.util.HashMap<>();
        java.util.Set<String> out = new java.util.LinkedHashSet<>();
        for (Allow a : allows) {
            if (a instanceof ToNamedPort) {
                out.addAll(lines(d, a));
                continue;
            }
            FromOrTo f = (FromOrTo) a;
            if (f.peer() instanceof BlockPeer b && b.block().except().isEmpty()) {
                String key = b.block().cidr().family() + "|" + ports(f.ports());
                blocks.computeIfAbsent(key, k -> new ArrayList<>()).add(b.block().cidr());
                blockPorts.put(key, f.ports());
                continue;
            }
            byPeer.computeIfAbsent(f.peer(), k -> new ArrayList<>()).addAll(f.ports());
            if (f.ports().isEmpty()) {
                anyPort.add(f.peer());
            }
        }
        byPeer.forEach((peer, ports) -> out.addAll(lines(d, new FromOrTo(peer, anyPort.contains(peer) ? List.of() : ports))));
        String peerField = d == Direction.INGRESS ? "saddr" : "daddr";
        blocks.forEach((key, cidrs) -> {
            List<Cidr> outer = outermost(cidrs);
            String ip = outer.get(0).family() == 4 ? "ip " : "ip6 ";
            out.add(ip + peerField + " { " + outer.stream().map(Cidr::toString).collect(Collectors.joining(", ")) + " }"
                    + ports(blockPorts.get(key)));
        });
        return List.copyOf(out);
    }

    /** The CIDRs no other of the list contains, in order (a CIDR twice: once). */
    private static List<Cidr> outermost(List<Cidr> cidrs) {
        List<Cidr> sorted = new ArrayList<>(new java.util.LinkedHashSet<>(cidrs));
        sorted.sort(java.util.Comparator.comparingInt(Cidr::prefixLength));
        List<Cidr> kept = new ArrayList<>();
        for (Cidr c : sorted) {
            if (kept.stream().noneMatch(k -> k.contains(c))) {
                kept.add(c);
            }
        }
        kept.sort(java.util.Comparator.comparing(Cidr::base));
        return kept;
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
        return " meta l4proto . th dport { " + disjoint(ranges).stream().map(r -> r.protocol().nft() + " . "
                + (r.from() == r.to() ? Integer.toString(r.from()) : r.from() + "-" + r.to()))
                .collect(Collectors.joining(", ")) + " }";
    }

    /**
     * The ranges merged where they overlap or touch, per protocol, in order: an interval set refuses overlapping
     * elements ({@code tcp . 80-81, tcp . 80}: "File exists"), and a rule's ports often overlap (two policies, a
     * named port inside a range).
     */
    static List<PortRange> disjoint(List<PortRange> ranges) {
        List<PortRange> sorted = new ArrayList<>(ranges);
        sorted.sort(java.util.Comparator.comparing(PortRange::protocol).thenComparingInt(PortRange::from));
        List<PortRange> out = new ArrayList<>();
        for (PortRange r : sorted) {
            PortRange last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && last.protocol() == r.protocol() && r.from() <= last.to() + 1) {
                out.set(out.size() - 1, new PortRange(r.protocol(), last.from(), Math.max(last.to(), r.to())));
            } else {
                out.add(r);
            }
        }
        return out;
    }

    private static String addrType(int family) {
        return family == 4 ? "ipv4_addr" : "ipv6_addr";
    }

    private static String elements(Collection<String> elements) {
        return elements.isEmpty() ? "" : " elements = { " + String.join(", ", elements) + " };";
    }
}
