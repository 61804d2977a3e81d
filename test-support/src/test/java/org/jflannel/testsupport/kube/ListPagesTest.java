package org.jflannel.testsupport.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ListPagesTest {
    @Test
    void aListWithALimitComesInPagesThatTogetherHoldEveryObjectOnceAtTheFirstPagesVersion() {
        try (KubeMockServer server = KubeMockServer.start(); KubernetesClient client = server.newClient()) {
            for (int i = 0; i < 7; i++) {
                client.pods().inNamespace(i % 2 == 0 ? "a" : "b").resource(new PodBuilder().withNewMetadata().withName("p" + i)
                        .endMetadata().build()).create();
            }
            PodList first = client.pods().inAnyNamespace().list(new ListOptionsBuilder().withLimit(3L).build());
            assertThat(first.getItems()).hasSize(3);
            assertThat(first.getMetadata().getContinue()).isNotEmpty();
            assertThat(first.getMetadata().getRemainingItemCount()).isEqualTo(4L);
            List<String> names = new ArrayList<>();
            first.getItems().forEach(p -> names.add(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName()));
            String token = first.getMetadata().getContinue();
            int pages = 1;
            while (token != null && !token.isEmpty()) {
                client.pods().inNamespace("a").resource(new PodBuilder().withNewMetadata().withName("late" + pages).endMetadata().build())
                        .create(); // changes meanwhile do not move the pages
                PodList next = client.pods().inAnyNamespace().list(new ListOptionsBuilder().withLimit(3L).withContinue(token).build());
                assertThat(next.getMetadata().getResourceVersion()).isEqualTo(first.getMetadata().getResourceVersion());
                next.getItems().forEach(p -> names.add(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName()));
                token = next.getMetadata().getContinue();
                pages++;
            }
            assertThat(pages).isEqualTo(3);
            assertThat(names).startsWith("a/p0", "a/p2", "a/p4").contains("a/p6", "b/p1", "b/p3", "b/p5").doesNotHaveDuplicates();
            assertThat(client.pods().inAnyNamespace().list().getItems()).as("no limit: everything").hasSize(9);
        }
    }
}
