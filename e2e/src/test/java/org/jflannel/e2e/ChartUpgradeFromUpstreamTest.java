package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.jflannel.testsupport.manifests.RenderedManifests;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code helm upgrade flannel chart/jflannel} on a release installed from upstream's chart (and back):
 * Helm patches the objects both renderings have in place and deletes or creates only the others, so
 * every object must keep its identity (apiVersion, kind, namespace, name), and no immutable field
 * may change: the DaemonSet's selector (it must select both pod templates) and the binding's
 * roleRef. Then the DaemonSet's pods are replaced by its rolling update, node by node.
 */
class ChartUpgradeFromUpstreamTest {
    /** Objects only ours renders, with the values that make them: Helm creates them on the way in, deletes them on the way back. */
    private static final Map<String, Set<String>> OURS_ONLY = Map.of("ConfigMap/kube-flannel/kube-flannel-etcd", Set.of("etcd"));

    record Identity(String apiVersion, String kind, String namespace, String name) {
        static Identity of(HasMetadata o) {
            return new Identity(o.getApiVersion(), o.getKind(), o.getMetadata().getNamespace(), o.getMetadata().getName());
        }

        String key() {
            return kind + "/" + (namespace == null ? "" : namespace + "/") + name;
        }
    }

    static Stream<String> valuesFiles() {
        return HelmRender.allValues().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valuesFiles")
    void everyObjectOfUpstreamsReleaseKeepsItsIdentity(String values) throws Exception {
        RenderedManifests upstream = HelmRender.render(HelmRender.UPSTREAM_CHART, HelmRender.values(values));
        RenderedManifests ours = HelmRender.render(HelmRender.CHART, HelmRender.values(values));

        List<Identity> theirs = upstream.objects().stream().map(Identity::of).toList();
        List<Identity> mine = ours.objects().stream().map(Identity::of).toList();
        assertThat(mine).as("ours with %s.yaml has every object of upstream's release", values).containsAll(theirs);
        assertThat(mine.stream().filter(i -> !theirs.contains(i)).map(Identity::key))
                .as("objects only ours renders with %s.yaml", values)
                .allMatch(k -> OURS_ONLY.getOrDefault(k, Set.of()).contains(values));
        // a Namespace in the release would meet upstream's kube-flannel, which no release owns: helm refuses it
        assertThat(ours.all(Namespace.class)).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valuesFiles")
    void theDaemonSetsSelectorAndTheBindingsRoleRefStayAndTheUpdateRolls(String values) throws Exception {
        RenderedManifests upstream = HelmRender.render(HelmRender.UPSTREAM_CHART, HelmRender.values(values));
        RenderedManifests ours = HelmRender.render(HelmRender.CHART, HelmRender.values(values));
        DaemonSet before = upstream.daemonSet();
        DaemonSet after = ours.daemonSet();

        assertThat(after.getSpec().getSelector()).as("spec.selector (immutable)").isEqualTo(before.getSpec().getSelector());
        // both ways: each selector selects the other's pods, so the controller adopts and replaces them
        assertThat(selects(before.getSpec().getSelector(), after.getSpec().getTemplate().getMetadata().getLabels())).isTrue();
        assertThat(selects(after.getSpec().getSelector(), before.getSpec().getTemplate().getMetadata().getLabels())).isTrue();
        assertThat(ours.one(ClusterRoleBinding.class, "flannel").getRoleRef()).as("roleRef (immutable)")
                .isEqualTo(upstream.one(ClusterRoleBinding.class, "flannel").getRoleRef());
        // no updateStrategy: RollingUpdate with maxUnavailable 1, as upstream's
        assertThat(after.getSpec().getUpdateStrategy()).isEqualTo(before.getSpec().getUpdateStrategy()).isNull();
    }

    /** matchLabels only (neither chart uses matchExpressions; one would fail this, as it should be looked at). */
    private static boolean selects(LabelSelector selector, Map<String, String> labels) {
        assertThat(selector.getMatchExpressions()).isEmpty();
        return labels.entrySet().containsAll(selector.getMatchLabels().entrySet());
    }
}
