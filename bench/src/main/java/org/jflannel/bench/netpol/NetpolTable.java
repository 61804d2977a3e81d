package org.jflannel.bench.netpol;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jflannel.netpol.Addr;
import org.jflannel.netpol.ClusterState;
import org.jflannel.netpol.Compiler;
import org.jflannel.netpol.DenyLog;
import org.jflannel.netpol.LabelSelector;
import org.jflannel.netpol.NftScript;
import org.jflannel.netpol.PodInfo;
import org.jflannel.netpol.Policy;
import org.jflannel.netpol.PolicyPeer;
import org.jflannel.netpol.PolicyPort;
import org.jflannel.netpol.PolicyRule;
import org.jflannel.netpol.Protocol;

/**
 * The tables bench/netpol-datapath.sh loads (issue 35's data-path figure: "100 policies selecting both pods"): the
 * benchmark's two pods, {@code client} on n1 (POD1) and {@code server} on n2 (POD2), both in namespace
 * {@code bench} with {@code app=bench}, among FILLER other pods over 8 more nodes; POLICIES policies, every one
 * selecting both pods for ingress and egress. All but the last allow only peers that are not the other pod (another
 * tier, another namespace, an address block, other ports), so a new connection's first packet walks every rule of
 * both pods' chains before the last policy's rule lets it through (the worst place for the allowing rule); the last
 * allows app=bench on every port. Writes the table of n1 and of n2, as flanneld renders them with its default
 * denied-packet log, to OUTDIR/n1.nft and OUTDIR/n2.nft, and prints their sizes.
 *
 * <pre>java -cp bench/target/benchmarks.jar org.jflannel.bench.netpol.NetpolTable OUTDIR POD1 POD2 [POLICIES [FILLER]]</pre>
 */
public final class NetpolTable {
    private NetpolTable() {
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        Addr client = Addr.parse(args[1]);
        Addr server = Addr.parse(args[2]);
        int policies = args.length > 3 ? Integer.parseInt(args[3]) : 100;
        int filler = args.length > 4 ? Integer.parseInt(args[4]) : 1000;
        List<PodInfo> pods = new ArrayList<>();
        pods.add(new PodInfo("bench", "client", Map.of("app", "bench"), List.of(client), "n1", false, List.of(), false));
        pods.add(new PodInfo("bench", "server", Map.of("app", "bench"), List.of(server), "n2", false,
                List.of(new PodInfo.NamedPort("iperf", Protocol.TCP, 5201)), false));
        for (int i = 0; i < filler; i++) {
            pods.add(new PodInfo("ns" + i % 20, "p" + i, Map.of("app", "a" + i % 50, "tier", List.of("web", "db", "cache").get(i % 3)),
                    List.of(Addr.parse("10.2" + (10 + i % 8) + "." + (i / 250 % 250) + "." + (i % 250 + 2))), "n" + (3 + i % 8), false,
                    List.of(), false));
        }
        LabelSelector bench = LabelSelector.of(Map.of("app", "bench"));
        List<Policy> ps = new ArrayList<>();
        for (int i = 0; i < policies - 1; i++) {
            List<PolicyRule> rules = List.of(
                    new PolicyRule(List.of(PolicyPeer.pods(LabelSelector.of(Map.of("tier", List.of("web", "db", "cache").get(i % 3))))),
                            List.of(PolicyPort.number(Protocol.TCP, 8000 + i))),
                    new PolicyRule(List.of(PolicyPeer.namespaces(LabelSelector.of(Map.of("kubernetes.io/metadata.name", "ns" + i % 20)))),
                            List.of(PolicyPort.range(Protocol.TCP, 9000 + i, 9000 + i + 10), PolicyPort.named(Protocol.TCP, "iperf"))),
                    new PolicyRule(List.of(PolicyPeer.block(new PolicyPeer.IpBlock(org.jflannel.netpol.Cidr.parse("cidr",
                            "172." + (16 + i % 16) + "." + i / 16 + ".0/24"), List.of()))), List.of()));
            ps.add(new Policy("bench", "p" + i, bench, true, true, rules, rules));
        }
        List<PolicyRule> last = List.of(new PolicyRule(List.of(PolicyPeer.pods(bench)), List.of()));
        ps.add(new Policy("bench", "allow-bench", bench, true, true, last, last));
        Map<String, Map<String, String>> ns = new java.util.TreeMap<>();
        ns.put("bench", Map.of("kubernetes.io/metadata.name", "bench"));
        for (int i = 0; i < 20; i++) {
            ns.put("ns" + i, Map.of("kubernetes.io/metadata.name", "ns" + i));
        }
        ClusterState s = new ClusterState(pods, ns, ps);
        Files.createDirectories(out);
        DenyLog log = new DenyLog(19014, 40);
        for (String node : List.of("n1", "n2")) {
            String script = NftScript.replace(Compiler.compile(s, node), log);
            Files.writeString(out.resolve(node + ".nft"), script);
            System.out.println("netpol-table node=" + node + " policies=" + policies + " pods=" + pods.size() + " bytes=" + script.length()
                    + " rules=" + script.lines().filter(l -> l.endsWith(" return")).count());
        }
    }
}
