package org.jflannel.subnet.kube;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.jflannel.testsupport.kube.KubeMockServer;

import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * Not a test: measures the heap an informer's cache retains for N realistic Nodes (the upstream
 * fixture: status, images, managedFields), with fabric8's default store and with {@link SlimNodeStore}.
 * Usage: {@code java -cp <test classpath> org.jflannel.subnet.kube.InformerFootprint [nodes] [default|slim]}.
 * Prints one line: {@code informer store=<s> nodes=<n> retainedHeapBytes=<b> perNodeBytes=<b>}.
 */
public final class InformerFootprint {

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        boolean slim = args.length > 1 && args[1].equals("slim");
        String json;
        try (InputStream in = InformerFootprint.class.getResourceAsStream("/kube/upstream-node-dualstack.json")) {
            json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        if (args.length > 2 && args[2].equals("store-only")) {
            storeOnly(json, n, slim);
            return;
        }
        try (KubeMockServer server = KubeMockServer.start(); KubernetesClient client = server.newClient()) {
            for (int i = 0; i < n; i++) {
                Node node = Serialization.unmarshal(json, Node.class);
                node.getMetadata().setName("worker-" + i);
                node.getMetadata().setUid(null);
                node.getMetadata().setResourceVersion(null);
                node.getSpec().setPodCIDR("10.42." + (i % 250) + ".0/24");
                client.nodes().resource(node).create();
            }
            long before = usedAfterGc();
            SharedIndexInformer<Node> informer = client.nodes().withLimit(500L).runnableInformer(300_000);
            if (slim) {
                informer.itemStore(new SlimNodeStore(KubeFixture.KEYS));
            }
            informer.start().toCompletableFuture().get(5, TimeUnit.MINUTES);
            long after = usedAfterGc();
            System.out.printf("informer store=%s nodes=%d retainedHeapBytes=%d perNodeBytes=%d%n",
                    slim ? "slim" : "default", informer.getStore().list().size(), after - before, (after - before) / n);
            informer.stop();
        }
    }

    /** The cache alone: N parsed Nodes kept whole (as fabric8's default store does) or slimmed. */
    private static void storeOnly(String json, int n, boolean slim) {
        SlimNodeStore slimStore = new SlimNodeStore(KubeFixture.KEYS);
        java.util.Map<String, Node> whole = new java.util.concurrent.ConcurrentHashMap<>();
        long before = usedAfterGc();
        for (int i = 0; i < n; i++) {
            Node node = Serialization.unmarshal(json, Node.class);
            node.getMetadata().setName("worker-" + i);
            if (slim) {
                slimStore.put(node.getMetadata().getName(), node);
            } else {
                whole.put(node.getMetadata().getName(), node);
            }
        }
        long after = usedAfterGc();
        System.out.printf("store-only store=%s nodes=%d retainedHeapBytes=%d perNodeBytes=%d%n",
                slim ? "slim" : "default", slim ? slimStore.size() : whole.size(), after - before, (after - before) / n);
    }

    /** At most this many collections; a stable reading usually comes after two or three. */
    private static final int MAX_GCS = 20;
    /** Two readings closer than this count as stable (a few objects of the JMX call itself). */
    private static final long STABLE_BYTES = 64 * 1024;

    /**
     * Used heap once garbage collection stops freeing memory: collect until two consecutive readings
     * agree within {@link #STABLE_BYTES} (bounded by {@link #MAX_GCS}); the lowest reading is returned.
     */
    private static long usedAfterGc() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long previous = Long.MAX_VALUE;
        long lowest = Long.MAX_VALUE;
        for (int i = 0; i < MAX_GCS; i++) {
            memory.gc();
            long used = memory.getHeapMemoryUsage().getUsed();
            lowest = Math.min(lowest, used);
            if (Math.abs(used - previous) < STABLE_BYTES) {
                break;
            }
            previous = used;
        }
        return lowest;
    }
}
