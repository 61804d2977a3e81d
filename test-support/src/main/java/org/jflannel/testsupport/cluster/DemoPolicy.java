package org.jflannel.testsupport.cluster;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The demo's {@code --network-policy} part: every pod published as a Pod object of namespace {@code demo} (the first
 * pod of each node {@code role=web}, the others {@code role=db}), then a sample policy, "db pods take traffic
 * only from web pods", and the ping matrix again: a pair answers exactly when its destination is no db pod or
 * its source is a web pod.
 */
final class DemoPolicy {
    private static final String NAMESPACE = "demo";
    private static final Duration LOADED_WITHIN = Bounds.scaled(Duration.ofSeconds(60));
    private final NetnsCluster cluster;
    private final PrintStream out;

    DemoPolicy(NetnsCluster cluster, PrintStream out) {
        this.cluster = cluster;
        this.out = out;
    }

    /** True when the matrix after the policy is the one it should give. */
    boolean run() throws Exception {
        cluster.applyKubeObject("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"" + NAMESPACE
                + "\",\"labels\":{\"kubernetes.io/metadata.name\":\"" + NAMESPACE + "\"}}}");
        for (Pod p : cluster.pods()) {
            cluster.applyKubeObject("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" + objectName(p)
                    + "\",\"namespace\":\"" + NAMESPACE + "\",\"labels\":{\"role\":\"" + role(p) + "\"}},\"spec\":{\"nodeName\":\""
                    + ClusterNames.nodeName(p.node()) + "\",\"containers\":[{\"name\":\"app\",\"image\":\"none\"}]},"
                    + "\"status\":{\"phase\":\"Running\",\"podIP\":\"" + p.ip() + "\",\"podIPs\":[{\"ip\":\"" + p.ip() + "\"}]}}");
        }
        out.println();
        out.println("NetworkPolicy demo/db-from-web: pods role=db (" + String.join(", ", names("db"))
                + ") take traffic only from pods role=web (" + String.join(", ", names("web")) + ")");
        cluster.applyKubeObject("{\"apiVersion\":\"networking.k8s.io/v1\",\"kind\":\"NetworkPolicy\",\"metadata\":{\"name\":"
                + "\"db-from-web\",\"namespace\":\"" + NAMESPACE + "\"},\"spec\":{\"podSelector\":{\"matchLabels\":{\"role\":\"db\"}},"
                + "\"ingress\":[{\"from\":[{\"podSelector\":{\"matchLabels\":{\"role\":\"web\"}}}]}]}}");
        for (ClusterNode n : cluster.nodes()) {
            awaitLoaded(n);
        }
        out.println("Pod-to-pod ping matrix with the policy (every node's flanneld loaded it into inet jflannel-netpol):");
        PingMatrix m = cluster.pingMatrix();
        out.println(m.render());
        List<String> wrong = new ArrayList<>();
        for (PingMatrix.Result r : m.results()) {
            boolean expected = !role(r.to()).equals("db") || role(r.from()).equals("web");
            if (r.answered() != expected) {
                wrong.add(r.from().name() + " -> " + r.to().name() + (expected ? " (should answer)" : " (should be dropped)"));
            }
        }
        out.println(wrong.isEmpty() ? "RESULT: the policy holds: pairs to db pods answer only from web pods"
                : "RESULT: FAILED, the policy does not hold for " + wrong);
        return wrong.isEmpty();
    }

    private void awaitLoaded(ClusterNode n) throws Exception {
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        Wait.until(n.name() + " loads the policy", LOADED_WITHIN, () -> json.readTree(n.document("/policy")),
                doc -> doc.path("policies").asInt() == 1 && doc.path("loads").asInt() > 0);
    }


    private List<String> names(String role) {
        return cluster.pods().stream().filter(p -> role(p).equals(role)).map(Pod::name).toList();
    }

    /** The first pod of each node serves the web role, the others hold data. */
    private static String role(Pod p) {
        return p.name().endsWith("/pod1") ? "web" : "db";
    }

    private static String objectName(Pod p) {
        return p.name().replace('/', '-');
    }
}
