package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * 20 pods of one node: their ADDs run in parallel (4 at a time), then their DELs. Every pod gets
 * its own address, and afterwards no scratch file and no address reservation is left.
 */
@Tag("netns")
class ConcurrentPodsIT {

    private static final int PODS = 20;
    private static final int PARALLEL = 4;
    private static final Pattern ADDRESS = Pattern.compile("\"address\": \"([0-9.]+)/24\"");

    @TempDir
    Path dir;

    @Test
    void parallelAddsGetDistinctAddressesAndParallelDelsLeaveNothingBehind() throws Exception {
        String subnetEnv = "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.7.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n";
        List<Netns> pods = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(PARALLEL);
        try (CniNode node = new CniNode(dir, subnetEnv)) {
            String conf = node.config("cbr0", "1.0.0", "\"isDefaultGateway\":true");
            for (int i = 0; i < PODS; i++) {
                pods.add(Netns.create("fp"));
            }
            List<Future<Netns.Result>> adds = new ArrayList<>();
            for (Netns pod : pods) {
                adds.add(pool.submit(() -> node.flannel("ADD", "ctr" + pod.name, pod, conf)));
            }
            List<String> addresses = new ArrayList<>();
            for (Future<Netns.Result> f : adds) {
                Netns.Result r = f.get(120, TimeUnit.SECONDS);
                assertThat(r.exit()).as("ADD: %s %s", r.stdout(), r.stderr()).isZero();
                Matcher m = ADDRESS.matcher(r.stdout());
                assertThat(m.find()).as(r.stdout()).isTrue();
                addresses.add(m.group(1));
            }
            assertThat(addresses).hasSize(PODS).doesNotHaveDuplicates();
            try (var files = Files.list(node.dataDir)) {
                assertThat(files).hasSize(PODS);
            }

            List<Future<Netns.Result>> dels = new ArrayList<>();
            for (Netns pod : pods) {
                dels.add(pool.submit(() -> node.flannel("DEL", "ctr" + pod.name, pod, conf)));
            }
            for (Future<Netns.Result> f : dels) {
                Netns.Result r = f.get(120, TimeUnit.SECONDS);
                assertThat(r.exit()).as("DEL: %s %s", r.stdout(), r.stderr()).isZero();
            }
            try (var files = Files.list(node.dataDir)) {
                assertThat(files).isEmpty();
            }
            try (var reserved = Files.list(node.ipamDir.resolve("cbr0"))) {
                assertThat(reserved.map(p -> p.getFileName().toString())).noneMatch(f -> f.startsWith("10.244."));
            }
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
            for (Netns pod : pods) {
                pod.close();
            }
        }
    }
}
