package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jflannel.e2e.RenderDiff.Difference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Ours and upstream's chart (v0.28.9), rendered by Helm with the same values file, compared object by
 * object ({@link RenderDiff}: identities, ConfigMap content as parsed JSON, volumes, mounts,
 * securityContext, env, probes, flags, ...). Every difference must be in the allow-list below with
 * its reason, and every allow-list entry must explain a difference in each values file it names, so
 * the list stays exact both ways.
 */
class ChartParityWithUpstreamTest {
    /** One allowed difference: {@code where} (a regex on the whole path), the values files it appears in, why. */
    record Allowed(String where, Set<String> in, String reason) {
        Allowed {
            in = Set.copyOf(in);
        }

        boolean explains(String values, Difference d) {
            return in.contains(values) && Pattern.compile(where).matcher(d.where()).matches();
        }
    }

    private static final String DS = "DaemonSet/kube-flannel/kube-flannel-ds: spec\\.template\\.spec\\.";
    private static final String MAIN = DS + "containers\\.kube-flannel\\.";

    static final List<Allowed> ALLOWED = List.of(
            new Allowed("(ServiceAccount/kube-flannel/flannel|ClusterRole/flannel|ClusterRoleBinding/flannel): metadata\\.labels"
                    + "|(ConfigMap/kube-flannel/kube-flannel-cfg|DaemonSet/kube-flannel/kube-flannel-ds): metadata\\.labels\\.k8s-app",
                    all(), "manifests/base's labels: k8s-app=flannel on every object (selectors do not use it)"),
            new Allowed("ClusterRole/flannel: rules", except("netpol", "every-key-vxlan", "every-key-wireguard"),
                    "ours grants exactly what flanneld calls (pods get; nodes get/list/watch; nodes/status patch: the calls "
                            + "DaemonSetOnFakeHostsIT records), upstream's also pods/namespaces list/watch; etcd mode (ours): nothing"),
            new Allowed("ConfigMap/kube-flannel/kube-flannel-cfg: data\\.cni-conf\\.json\\.cniVersion",
                    except("every-key-vxlan", "every-key-wireguard"),
                    "ours defaults to cniVersion 1.0.0 (manifests/base: CHECK and GC, multus with CNI 1.1); upstream 0.3.1"),
            new Allowed("ConfigMap/kube-flannel/kube-flannel-cfg: data\\.net-conf\\.json \\(as text\\)", Set.of("every-key-wireguard"),
                    "Ours: tunnelMode written as a JSON string; upstream's chart writes \"Mode\": auto, which is not JSON "
                            + "(the rest of the file is compared with upstream's Mode quoted)"),
            new Allowed(MAIN + "program", all(),
                    "our image's launcher, /opt/jflannel/bin/flanneld (the flags are compared and the same)"),
            new Allowed("(" + MAIN + "|" + DS + "initContainers\\.install-cni(-plugin)?\\.)image", except("image-and-pull-secrets",
                    "every-key-vxlan", "every-key-wireguard"),
                    "the default image is jflannel's (ghcr.io/jflannel/jflannel:0.1.0), also for the plugin"),
            new Allowed(DS + "initContainers\\.install-cni-plugin\\.exec", except("image-and-pull-secrets"),
                    "the plugin comes from jflannel's image: flanneld install-cni-plugin copies it and unpacks its runtime "
                            + "atomically; with another flannel_cni image ours runs upstream's cp as upstream does"),
            new Allowed(DS + "initContainers\\.install-cni\\.exec", except("skip-cni-config"),
                    "flanneld install-cni-conf is upstream's install-conf (/opt/bin/install-conf in our image runs it)"),
            new Allowed(DS + "initContainers\\.cds-archive|" + DS + "volumes\\.cds|" + MAIN + "volumeMounts\\.cds", all(),
                    "the daemon's class-data archive, made on the node once per image (manifests/base, docs/image.md)"),
            new Allowed(MAIN + "resources\\.requests\\.memory", except("every-key-vxlan", "every-key-wireguard"),
                    "128Mi: the JVM daemon's measured RSS (docs/installing.md, Resources); upstream's 50Mi would under-report it"),
            new Allowed(MAIN + "volumeMounts\\.dev-net-tun|" + DS + "volumes\\.dev-net-tun", Set.of("udp", "wireguard", "every-key-wireguard"),
                    "flannel0 / our userspace flannel-wg are TUN devices: /dev/net/tun as a hostPath (manifests/overlays/udp, /wireguard)"),
            new Allowed(MAIN + "securityContext\\.capabilities\\.add", Set.of("udp"),
                    "BPF for the udp kernel datapath's tc programs (manifests/overlays/udp; jflannel.udp.kernel: off drops it)"),
            new Allowed("ConfigMap/kube-flannel/kube-flannel-etcd|" + DS + "automountServiceAccountToken|" + MAIN
                    + "env\\.FLANNELD_ETCD_[A-Z]+|" + MAIN + "volumeMounts\\.etcd-tls|" + DS + "volumes\\.etcd-tls", Set.of("etcd"),
                    "ours, jflannel.etcd (manifests/overlays/etcd): etcd's address from ConfigMap kube-flannel-etcd, its TLS "
                            + "Secret, no service-account token (upstream's chart has no such keys)"));

    static Stream<String> valuesFiles() {
        return HelmRender.allValues().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valuesFiles")
    void everyDifferenceFromUpstreamsChartIsAllowedAndEveryAllowanceIsUsed(String values) throws Exception {
        List<Difference> diffs = RenderDiff.between(HelmRender.template(HelmRender.CHART, HelmRender.values(values)),
                HelmRender.template(HelmRender.UPSTREAM_CHART, HelmRender.values(values)));

        List<Difference> unexplained = diffs.stream().filter(d -> ALLOWED.stream().noneMatch(a -> a.explains(values, d))).toList();
        assertThat(unexplained).as("differences from upstream's chart for %s.yaml that no allow-list entry explains", values).isEmpty();
        for (Allowed a : ALLOWED) {
            if (a.in().contains(values)) {
                assertThat(diffs).as("allow-list entry %s (%s) explains nothing in %s.yaml: take the file out of it", a.where(),
                        a.reason(), values).anyMatch(d -> a.explains(values, d));
            }
        }
    }

    @Test
    void theAllowListNamesOnlyValuesFilesThatExist() {
        Set<String> named = new HashSet<>();
        ALLOWED.forEach(a -> named.addAll(a.in()));

        assertThat(HelmRender.allValues()).containsAll(named);
    }

    @Test
    void theComparisonSeesADifferenceInTheSelector() throws Exception {
        // the comparison itself: a changed selector (immutable on a DaemonSet) is a difference no entry allows
        String ours = HelmRender.template(HelmRender.CHART, HelmRender.values("defaults"));
        String upstream = HelmRender.template(HelmRender.UPSTREAM_CHART, HelmRender.values("defaults"));
        String changed = ours.replace("    matchLabels:\n      app: flannel", "    matchLabels:\n      app: jflannel");
        assertThat(changed).isNotEqualTo(ours);

        List<Difference> diffs = RenderDiff.between(changed, upstream);

        assertThat(diffs).anyMatch(d -> d.where().endsWith("spec.selector.matchLabels.app")
                && ALLOWED.stream().noneMatch(a -> a.explains("defaults", d)));
    }

    private static Set<String> all() {
        return Set.copyOf(HelmRender.allValues());
    }

    private static Set<String> except(String... names) {
        Set<String> s = new HashSet<>(HelmRender.allValues());
        List.of(names).forEach(s::remove);
        return s;
    }
}
