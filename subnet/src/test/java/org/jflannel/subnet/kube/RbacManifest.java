package org.jflannel.subnet.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.jflannel.testsupport.kube.ApiCall;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** {@code manifests/base/rbac.yml}, parsed with fabric8's own YAML loader, and what its ClusterRole allows. */
final class RbacManifest {

    /** The module runs tests from {@code subnet/}; the manifests are beside it. */
    static final Path FILE = Path.of("..", "manifests", "base", "rbac.yml");

    final List<HasMetadata> objects;

    private RbacManifest(List<HasMetadata> objects) {
        this.objects = objects;
    }

    static RbacManifest load(KubernetesClient parser) throws IOException {
        try (InputStream in = Files.newInputStream(FILE)) {
            return new RbacManifest(parser.load(in).items());
        }
    }

    ClusterRole flannelRole() {
        return objects.stream().filter(o -> o instanceof ClusterRole && o.getMetadata().getName().equals("flannel"))
                .map(ClusterRole.class::cast).findFirst().orElseThrow(() -> new AssertionError("no ClusterRole flannel in " + FILE));
    }

    /** Whether a rule of the flannel ClusterRole grants {@code call} (group, resource[/subresource], verb; "*" matches all). */
    boolean allows(ApiCall call) {
        if (call.resource().isEmpty()) {
            return false; // a non-resource URL: the role grants none
        }
        for (PolicyRule r : flannelRole().getRules()) {
            if (matches(r.getApiGroups(), call.group()) && matches(r.getResources(), call.rbacResource())
                    && matches(r.getVerbs(), call.verb())) {
                return true;
            }
        }
        return false;
    }

    /** What the flannel ClusterRole grants, one {@code "verb group/resource"} per verb and resource ({@code ""} = core). */
    java.util.SortedSet<String> grants() {
        java.util.SortedSet<String> out = new java.util.TreeSet<>();
        for (PolicyRule r : flannelRole().getRules()) {
            for (String group : r.getApiGroups()) {
                for (String resource : r.getResources()) {
                    for (String verb : r.getVerbs()) {
                        out.add(grant(verb, group, resource));
                    }
                }
            }
        }
        return out;
    }

    /** The {@link #grants()} entry a recorded resource call needs. */
    static String grant(ApiCall call) {
        return grant(call.verb(), call.group(), call.rbacResource());
    }

    private static String grant(String verb, String group, String resource) {
        return verb + " " + group + "/" + resource;
    }

    private static boolean matches(List<String> granted, String wanted) {
        return granted != null && (granted.contains("*") || granted.contains(wanted));
    }
}
