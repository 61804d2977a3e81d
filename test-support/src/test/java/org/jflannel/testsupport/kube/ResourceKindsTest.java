package org.jflannel.testsupport.kube;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class ResourceKindsTest {

    @ParameterizedTest
    @CsvSource({
            "/api/v1/nodes, v1, Node",
            "/api/v1/nodes?watch=true&resourceVersion=3, v1, Node",
            "/api/v1/namespaces/kube-flannel/pods, v1, Pod",
            "/api/v1/namespaces, v1, Namespace",
            "/apis/apps/v1/namespaces/kube-flannel/daemonsets, apps/v1, DaemonSet",
            "/apis/example.com/v1/widgets, example.com/v1, Unknown"})
    void aCollectionPathNamesItsObjectsKind(String path, String apiVersion, String kind) {
        assertThat(ResourceKinds.of(path)).isEqualTo(new ResourceKinds.Kind(apiVersion, kind));
    }
}
