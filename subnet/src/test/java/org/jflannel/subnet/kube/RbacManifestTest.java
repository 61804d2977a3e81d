package org.jflannel.subnet.kube;

import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import org.jflannel.testsupport.kube.ApiCall;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/** manifests/base/rbac.yml is REFERENCE §10's RBAC, and the coverage check really rejects what it does not grant. */
class RbacManifestTest {

    private static KubernetesClient parser;
    private static RbacManifest rbac;

    @BeforeAll
    static void load() throws Exception {
        parser = new KubernetesClientBuilder().build();
        rbac = RbacManifest.load(parser);
    }

    @AfterAll
    static void close() {
        parser.close();
    }

    @Test
    void clusterRoleIsExactlyUpstreams() {
        assertThat(rbac.flannelRole().getRules())
                .extracting(PolicyRule::getApiGroups, PolicyRule::getResources, PolicyRule::getVerbs)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(java.util.List.of(""), java.util.List.of("pods"), java.util.List.of("get")),
                        org.assertj.core.groups.Tuple.tuple(java.util.List.of(""), java.util.List.of("nodes"), java.util.List.of("get", "list", "watch")),
                        org.assertj.core.groups.Tuple.tuple(java.util.List.of(""), java.util.List.of("nodes/status"), java.util.List.of("patch")));
    }

    @Test
    void bindingGivesTheRoleToServiceAccountFlannelInKubeFlannel() {
        ClusterRoleBinding b = rbac.objects.stream().filter(ClusterRoleBinding.class::isInstance)
                .map(ClusterRoleBinding.class::cast).findFirst().orElseThrow();
        ServiceAccount sa = rbac.objects.stream().filter(ServiceAccount.class::isInstance)
                .map(ServiceAccount.class::cast).findFirst().orElseThrow();

        assertThat(b.getMetadata().getName()).isEqualTo("flannel");
        assertThat(b.getRoleRef().getKind()).isEqualTo("ClusterRole");
        assertThat(b.getRoleRef().getName()).isEqualTo("flannel");
        assertThat(b.getSubjects()).singleElement().satisfies(s -> {
            assertThat(s.getKind()).isEqualTo("ServiceAccount");
            assertThat(s.getName()).isEqualTo("flannel");
            assertThat(s.getNamespace()).isEqualTo("kube-flannel");
        });
        assertThat(sa.getMetadata().getName()).isEqualTo("flannel");
        assertThat(sa.getMetadata().getNamespace()).isEqualTo("kube-flannel");
    }

    @ParameterizedTest(name = "{0} {1} -> {2}")
    @CsvSource({
            "GET,    /api/v1/namespaces/kube-flannel/pods/flannel-x, true",
            "GET,    /api/v1/nodes/n1,                              true",
            "GET,    /api/v1/nodes?limit=500,                       true",
            "GET,    /api/v1/nodes?watch=true&resourceVersion=5,    true",
            "PATCH,  /api/v1/nodes/n1/status,                       true",
            "PATCH,  /api/v1/nodes/n1,                              false",
            "PUT,    /api/v1/nodes/n1/status,                       false",
            "GET,    /api/v1/nodes/n1/status,                       false",
            "GET,    /api/v1/namespaces/kube-flannel/pods,          false",
            "DELETE, /api/v1/nodes/n1,                              false",
            "GET,    /version,                                      false",
    })
    void checkerGrantsOnlyWhatTheRoleSays(String method, String path, boolean granted) {
        assertThat(rbac.allows(ApiCall.of(method, path, null, null))).isEqualTo(granted);
    }
}
