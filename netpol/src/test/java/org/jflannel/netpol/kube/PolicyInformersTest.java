package org.jflannel.netpol.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jflannel.netpol.PolicySync;
import org.jflannel.testsupport.cluster.Wait;
import org.jflannel.testsupport.kube.KubeMockServer;
import org.junit.jupiter.api.Test;

/**
 * The informers against the API stand-in (pages of 500, as a real server lists): the first table is made from the
 * whole first listing of all three kinds, never from part of one (which could leave an isolated pod open on a
 * restart), and later changes follow.
 */
class PolicyInformersTest {
    private static final int PODS = 1500;

    @Test
    void theFirstTableHoldsEveryPodOfTheFirstListingAndChangesFollow() throws Exception {
        try (KubeMockServer server = KubeMockServer.start(); KubernetesClient client = server.newClient()) {
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("x").endMetadata().build()).create();
            for (int i = 0; i < PODS; i++) {
                String ip = "10.244." + (i / 250) + "." + (i % 250 + 2);
                client.pods().inNamespace("x").resource(new PodBuilder().withNewMetadata().withName("p" + i)
                        .addToLabels("app", "db").endMetadata().withNewSpec().withNodeName("n1").endSpec()
                        .withNewStatus().withPhase("Running").withPodIP(ip).addNewPodIP(ip).endStatus().build()).create();
            }
            client.network().v1().networkPolicies().inNamespace("x").resource(new NetworkPolicyBuilder().withNewMetadata()
                    .withName("closed").endMetadata().withNewSpec().withNewPodSelector().endPodSelector().endSpec().build()).create();
            List<String> scripts = new CopyOnWriteArrayList<>();
            try (PolicySync sync = new PolicySync("n1", scripts::add); PolicyInformers informers = PolicyInformers.start(client, sync)) {
                String first = Wait.until("the first table", Duration.ofSeconds(60), () -> scripts.isEmpty() ? null : scripts.get(0),
                        t -> t != null);
                assertThat(first.lines().filter(l -> l.startsWith("  chain in_"))).as("the first table: a chain per pod of the listing")
                        .hasSize(PODS);

                client.pods().inNamespace("x").withName("p7").delete();
                Wait.until("the deleted pod's chain gone", Duration.ofSeconds(60), () -> sync.appliedRules().orElseThrow().chains().size(),
                        n -> n == PODS - 1);
            }
        }
    }
}
