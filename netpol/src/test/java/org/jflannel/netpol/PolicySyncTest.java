package org.jflannel.netpol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jflannel.netpol.Fixtures.pod;
import static org.jflannel.netpol.Fixtures.sel;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PolicySyncTest {
    static final PodInfo A = pod("x", "a", "n1", "10.244.1.2", Map.of("pod", "a"));

    @Test
    void nothingIsAppliedBeforeTheFirstListingThenEveryChangeAndOnlyChanges() throws Exception {
        List<String> applied = new CopyOnWriteArrayList<>();
        try (PolicySync sync = new PolicySync("n1", applied::add)) {
            sync.pod("x/a", A);
            sync.policy("x/deny", Fixtures.ingress("x", "deny", sel("pod", "a")), null);
            assertThat(sync.awaitIdle(5000)).isTrue();
            assertThat(applied).as("before ready: the kernel's table stays").isEmpty();

            sync.ready();
            assertThat(sync.awaitIdle(5000)).isTrue();
            assertThat(applied).hasSize(1);
            assertThat(applied.get(0)).contains("10.244.1.2 : jump in_");
            assertThat(sync.status().chains()).isEqualTo(1);

            sync.namespace("y", Map.of("team", "y")); // changes nothing compiled
            assertThat(sync.awaitIdle(5000)).isTrue();
            assertThat(applied).as("same table: not applied again").hasSize(1);

            sync.policy("x/deny", null, null);
            assertThat(sync.awaitIdle(5000)).isTrue();
            assertThat(applied).hasSize(2);
            assertThat(applied.get(0)).as("the first load: the whole table").startsWith("add table inet jflannel-netpol");
            assertThat(applied.get(1)).as("then an update: the chain and its map elements go").doesNotContain("table ")
                    .contains("delete element inet jflannel-netpol ingress4 { 10.244.1.2 }").contains("delete chain")
                    .doesNotContain("jump in_");
        }
    }

    @Test
    void aRejectedPolicyIsListedAndTheOthersEnforcedAndAFailedApplyIsRetried() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        List<String> applied = new CopyOnWriteArrayList<>();
        try (PolicySync sync = new PolicySync("n1", script -> {
            if (calls.incrementAndGet() == 1) {
                throw new java.io.IOException("nft: exit 1: Error: Could not process rule");
            }
            applied.add(script);
        })) {
            sync.pod("x/a", A);
            sync.policy("x/bad", null, "spec.ingress[0].from[0].ipBlock.cidr: not a CIDR: \"x\"");
            sync.policy("x/deny", Fixtures.ingress("x", "deny", sel("pod", "a")), null);
            sync.ready();
            org.jflannel.testsupport.cluster.Wait.until("the retry's load", java.time.Duration.ofSeconds(10), () -> !applied.isEmpty());
            assertThat(applied).as("applied on the retry").hasSize(1);
            assertThat(applied.get(0)).as("after a failed load, the whole table").startsWith("add table inet jflannel-netpol");
            assertThat(sync.status().failures()).isEqualTo(1);
            assertThat(sync.status().rejected()).containsOnlyKeys("x/bad");
            assertThat(sync.status().policies()).isEqualTo(1);
        }
    }
}
