package org.jflannel.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.jflannel.core.NetConf;
import org.jflannel.testsupport.manifests.RenderedManifests;

/**
 * The cross-references an API server or kubelet would only find out about at run time: every
 * volumeMount names a volume, every ConfigMap a pod reads exists with the keys it reads, the
 * ServiceAccount and the RBAC wiring exist, probes hit the port flanneld listens on, the configs
 * parse. Each check returns the problems it found (empty = fine), so one run shows them all.
 */
final class ManifestChecks {
    static final String NAMESPACE = "kube-flannel";
    static final String CONFIG_DIR = "/etc/kube-flannel/";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final RenderedManifests m;
    private final Set<String> namespacesGiven;
    private final List<String> problems = new ArrayList<>();

    private ManifestChecks(RenderedManifests m, Set<String> namespacesGiven) {
        this.m = m;
        this.namespacesGiven = Set.copyOf(namespacesGiven);
    }

    /** A kustomization's objects: every namespace they use is among them. */
    static List<String> all(RenderedManifests m) {
        return all(m, Set.of());
    }

    /**
     * Objects whose namespaces {@code namespacesGiven} are made outside them: a Helm release's
     * ({@code helm install -n kube-flannel --create-namespace}; the chart renders no Namespace, as
     * upstream's, so a release of upstream's chart upgrades to it without meeting an object it cannot adopt).
     */
    static List<String> all(RenderedManifests m, Set<String> namespacesGiven) {
        ManifestChecks c = new ManifestChecks(m, namespacesGiven);
        c.namespaced();
        c.volumes();
        c.configMaps();
        c.serviceAccountAndRbac();
        c.probes();
        c.configs();
        return c.problems;
    }

    private void problem(String text) {
        problems.add(m.source().getFileName() + ": " + text);
    }

    static PodSpec pod(RenderedManifests m) {
        return m.daemonSet().getSpec().getTemplate().getSpec();
    }

    static Stream<Container> containers(PodSpec pod) {
        return Stream.concat(pod.getInitContainers().stream(), pod.getContainers().stream());
    }

    static Container flannel(PodSpec pod) {
        return pod.getContainers().stream().filter(c -> c.getName().equals("kube-flannel")).findFirst()
                .orElseThrow(() -> new IllegalStateException("no container kube-flannel"));
    }

    /** The value of {@code --name=value} in the main container's args (or command), empty when absent. */
    static Optional<String> flag(Container c, String name) {
        return Stream.concat(c.getCommand().stream(), c.getArgs().stream()).filter(a -> a.startsWith(name + "="))
                .map(a -> a.substring(name.length() + 1)).reduce((a, b) -> b);
    }

    static boolean kubeMode(PodSpec pod) {
        return flannel(pod).getArgs().contains("--kube-subnet-mgr");
    }

    private void namespaced() {
        List<String> namespaces = m.all(Namespace.class).stream().map(n -> n.getMetadata().getName()).toList();
        for (HasMetadata o : m.objects()) {
            String ns = o.getMetadata().getNamespace();
            if (ns != null && !namespaces.contains(ns) && !namespacesGiven.contains(ns)) {
                problem(o.getKind() + "/" + o.getMetadata().getName() + " is in namespace " + ns + ", which is not rendered");
            }
        }
        if (!NAMESPACE.equals(m.daemonSet().getMetadata().getNamespace())) {
            problem("DaemonSet not in " + NAMESPACE);
        }
    }

    private void volumes() {
        PodSpec pod = pod(m);
        List<String> names = pod.getVolumes().stream().map(Volume::getName).toList();
        containers(pod).forEach(c -> {
            for (VolumeMount vm : c.getVolumeMounts()) {
                if (!names.contains(vm.getName())) {
                    problem("container " + c.getName() + " mounts volume " + vm.getName() + ", which the pod does not declare");
                }
            }
        });
        if (names.stream().distinct().count() != names.size()) {
            problem("duplicate volume names " + names);
        }
    }

    private void configMaps() {
        PodSpec pod = pod(m);
        for (Volume v : pod.getVolumes()) {
            if (v.getConfigMap() != null && m.find(ConfigMap.class, v.getConfigMap().getName()).isEmpty()
                    && !Boolean.TRUE.equals(v.getConfigMap().getOptional())) {
                problem("volume " + v.getName() + " names ConfigMap " + v.getConfigMap().getName() + ", which is not rendered");
            }
        }
        // files the containers read from a ConfigMap volume: every command/arg path under its mount
        containers(pod).forEach(c -> {
            List<String> words = new ArrayList<>(Stream.concat(c.getCommand().stream(), c.getArgs().stream()).toList());
            if (c.getName().equals("kube-flannel") && kubeMode(pod)) {
                // flanneld's default --net-config-path (REFERENCE §1) in kube mode
                words.add(flag(c, "--net-config-path").orElse(CONFIG_DIR + "net-conf.json"));
            }
            for (String w : words) {
                configMapFile(pod, c, w).ifPresent(cmKey -> {
                    ConfigMap cm = m.find(ConfigMap.class, cmKey[0]).orElse(null);
                    if (cm == null || cm.getData() == null || !cm.getData().containsKey(cmKey[1])) {
                        problem("container " + c.getName() + " reads " + w + ": key " + cmKey[1] + " of ConfigMap "
                                + cmKey[0] + " is missing");
                    }
                });
            }
            for (EnvVar e : c.getEnv()) {
                if (e.getValueFrom() != null && e.getValueFrom().getConfigMapKeyRef() != null) {
                    var ref = e.getValueFrom().getConfigMapKeyRef();
                    ConfigMap cm = m.find(ConfigMap.class, ref.getName()).orElse(null);
                    boolean present = cm != null && cm.getData() != null && cm.getData().containsKey(ref.getKey());
                    if (!present && !Boolean.TRUE.equals(ref.getOptional())) {
                        problem("env " + e.getName() + " of " + c.getName() + " needs key " + ref.getKey()
                                + " of ConfigMap " + ref.getName() + ", which is missing");
                    }
                }
            }
        });
    }

    /** {ConfigMap name, key} when {@code path} lies in a ConfigMap volume mounted by {@code c}. */
    private static Optional<String[]> configMapFile(PodSpec pod, Container c, String path) {
        for (VolumeMount vm : c.getVolumeMounts()) {
            String dir = vm.getMountPath().endsWith("/") ? vm.getMountPath() : vm.getMountPath() + "/";
            if (path.startsWith(dir) && path.length() > dir.length() && !path.substring(dir.length()).contains("/")) {
                for (Volume v : pod.getVolumes()) {
                    if (v.getName().equals(vm.getName()) && v.getConfigMap() != null) {
                        return Optional.of(new String[] {v.getConfigMap().getName(), path.substring(dir.length())});
                    }
                }
            }
        }
        return Optional.empty();
    }

    private void serviceAccountAndRbac() {
        PodSpec pod = pod(m);
        String sa = pod.getServiceAccountName();
        if (sa == null || m.all(ServiceAccount.class).stream().noneMatch(s -> s.getMetadata().getName().equals(sa)
                && NAMESPACE.equals(s.getMetadata().getNamespace()))) {
            problem("serviceAccountName " + sa + " has no ServiceAccount in " + NAMESPACE);
        }
        for (ClusterRoleBinding b : m.all(ClusterRoleBinding.class)) {
            if (m.find(ClusterRole.class, b.getRoleRef().getName()).isEmpty()) {
                problem("ClusterRoleBinding " + b.getMetadata().getName() + " names ClusterRole " + b.getRoleRef().getName()
                        + ", which is not rendered");
            }
            for (Subject s : b.getSubjects()) {
                if (!s.getKind().equals("ServiceAccount") || !s.getName().equals(sa) || !NAMESPACE.equals(s.getNamespace())) {
                    problem("ClusterRoleBinding " + b.getMetadata().getName() + " binds " + s.getKind() + " "
                            + s.getNamespace() + "/" + s.getName() + ", not the pod's ServiceAccount");
                }
            }
        }
        boolean grants = m.all(ClusterRole.class).stream().anyMatch(r -> r.getRules() != null && !r.getRules().isEmpty());
        if (kubeMode(pod) && (m.all(ClusterRoleBinding.class).isEmpty() || !grants)) {
            problem("kube mode without a ClusterRole bound to the ServiceAccount");
        }
        if (kubeMode(pod) && Boolean.FALSE.equals(pod.getAutomountServiceAccountToken())) {
            problem("kube mode needs the service account token, but automountServiceAccountToken is false");
        }
    }

    private void probes() {
        PodSpec pod = pod(m);
        if (!Boolean.TRUE.equals(pod.getHostNetwork())) {
            problem("hostNetwork is not true: flanneld must run in the node's network namespace");
        }
        Container c = flannel(pod);
        Optional<String> port = flag(c, "--healthz-port");
        if (port.isEmpty()) {
            problem("kube-flannel has no --healthz-port, but probes need it");
            return;
        }
        int healthz = Integer.parseInt(port.get());
        for (Map.Entry<String, Probe> p : Map.of("/healthz", Optional.ofNullable(c.getLivenessProbe()),
                "/readyz", Optional.ofNullable(c.getReadinessProbe())).entrySet().stream()
                .filter(e -> e.getValue().isPresent()).map(e -> Map.entry(e.getKey(), e.getValue().get())).toList()) {
            HTTPGetAction get = p.getValue().getHttpGet();
            if (get == null || !p.getKey().equals(get.getPath())) {
                problem("probe for " + p.getKey() + " is " + p.getValue());
                continue;
            }
            int probed = probePort(c, get);
            if (probed != healthz) {
                problem("probe " + p.getKey() + " hits port " + probed + ", flanneld listens on --healthz-port=" + healthz);
            }
        }
        if (c.getLivenessProbe() == null || c.getReadinessProbe() == null) {
            problem("kube-flannel lacks a liveness or readiness probe");
        }
    }

    /** The probe's port number: a number, or the containerPort of that name (-1 when none has it). */
    static int probePort(Container c, HTTPGetAction get) {
        if (get.getPort().getIntVal() != null) {
            return get.getPort().getIntVal();
        }
        return c.getPorts().stream().filter(p -> get.getPort().getStrVal().equals(p.getName()))
                .map(ContainerPort::getContainerPort).findFirst().orElse(-1);
    }

    private void configs() {
        PodSpec pod = pod(m);
        Optional<ConfigMap> cfg = m.find(ConfigMap.class, "kube-flannel-cfg");
        if (cfg.isEmpty()) {
            problem("no ConfigMap kube-flannel-cfg");
            return;
        }
        Map<String, String> data = cfg.get().getData();
        try {
            JsonNode cni = JSON.readTree(data.get("cni-conf.json"));
            if (!cni.path("plugins").path(0).path("type").asText().equals("flannel")) {
                problem("cni-conf.json: the first plugin is not flannel: " + cni);
            }
            if (cni.path("cniVersion").asText().compareTo("1.0.0") < 0) {
                problem("cni-conf.json: cniVersion " + cni.path("cniVersion") + " is below 1.0.0");
            }
        } catch (Exception e) {
            problem("cni-conf.json does not parse: " + e.getMessage());
        }
        try {
            NetConf.parse(data.get("net-conf.json"), kubeMode(pod) ? NetConf.Mode.KUBE : NetConf.Mode.ETCD, "net-conf.json");
        } catch (Exception e) {
            problem("net-conf.json: " + e.getMessage());
        }
    }
}
