package org.jflannel.testsupport.cluster;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HostPathVolumeSource;
import io.fabric8.kubernetes.api.model.KeyToPath;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs one node's copy of a DaemonSet pod the way kubelet and a container runtime would, without a
 * runtime: every container is its {@code command}/{@code args} chrooted into a copy-on-write overlay
 * of the unpacked image, with {@code /proc}, {@code /sys} and {@code /dev}, its declared volumeMounts
 * bind-mounted in (hostPath volumes from the node's {@link FakeHost}, configMap and secret volumes
 * written as kubelet writes them, the service-account token when the pod mounts one), its env
 * resolved (values, {@code $(VAR)} references, fieldRefs, configMap and secret keys) on top of the
 * image's and the kubelet's variables, in the node's network namespace (only {@code hostNetwork}
 * pods). A container that is not {@code privileged} runs with a read-only {@code /proc/sys} and, as
 * its bounding and effective set ({@code setpriv}, after the chroot), exactly its
 * {@code securityContext.capabilities.add} (minus {@code drop}) when it lists any, stricter than a
 * runtime, which adds them to its default set, so the manifest's list is proved sufficient; else the
 * runtime's default set (containerd's) minus {@code drop}. Each container gets a private mount namespace ({@code unshare --mount}), so nothing is
 * mounted on this machine. Init containers run in order and must exit 0.
 */
public final class PodRunner {
    public static final String SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
    private static final Duration INIT_WITHIN = Duration.ofSeconds(180);
    /** containerd's (and Docker's) default capabilities of an unprivileged container. */
    static final List<String> RUNTIME_DEFAULT_CAPS = List.of("CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD",
            "NET_RAW", "SETGID", "SETUID", "SETFCAP", "SETPCAP", "NET_BIND_SERVICE", "SYS_CHROOT", "KILL", "AUDIT_WRITE");
    private static final Pattern VAR_REF = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)|\\$\\$");

    /** One bind mount into a container: {@code source} on this machine onto {@code target} in the container. */
    record Mount(Path source, String target, boolean readOnly) {
    }

    /** Who the pod is: the Downward API's fields. */
    public record Identity(String podName, String namespace, String nodeName, String nodeIp) {
    }

    private final java.util.function.Function<Container, UnpackedImage> images;
    private final PodSpec spec;
    private final Identity who;
    private final String netns;
    private final FakeHost host;
    private final Path dir;
    private final Map<String, ConfigMap> configMaps;
    private final Map<String, Secret> secrets;
    private final Map<String, String> kubeletEnv;
    private final Path serviceAccountDir;
    private final Map<String, Path> volumes = new LinkedHashMap<>();

    /**
     * {@code serviceAccountDir}: token, ca.crt and namespace as kubelet projects them (mounted unless the
     * pod says {@code automountServiceAccountToken: false}); {@code kubeletEnv}: what kubelet adds to
     * every container (KUBERNETES_SERVICE_HOST/PORT, HOSTNAME).
     */
    public PodRunner(UnpackedImage image, PodSpec spec, Identity who, String netns, FakeHost host, Path dir,
                     List<ConfigMap> configMaps, List<Secret> secrets, Map<String, String> kubeletEnv,
                     Path serviceAccountDir) throws IOException {
        this(c -> image, spec, who, netns, host, dir, configMaps, secrets, kubeletEnv, serviceAccountDir);
    }

    /** {@code images}: the unpacked image each container runs from (its {@code image:}, as the runtime pulls it). */
    public PodRunner(java.util.function.Function<Container, UnpackedImage> images, PodSpec spec, Identity who, String netns,
                     FakeHost host, Path dir, List<ConfigMap> configMaps, List<Secret> secrets, Map<String, String> kubeletEnv,
                     Path serviceAccountDir) throws IOException {
        if (!Boolean.TRUE.equals(spec.getHostNetwork())) {
            throw new IllegalArgumentException("pod " + who.podName() + ": only hostNetwork pods run here");
        }
        this.images = images;
        this.spec = spec;
        this.who = who;
        this.netns = netns;
        this.host = host;
        this.dir = dir;
        this.configMaps = byName(configMaps);
        this.secrets = byName(secrets);
        this.kubeletEnv = Map.copyOf(kubeletEnv);
        this.serviceAccountDir = serviceAccountDir;
        prepareVolumes();
    }

    private static <T extends io.fabric8.kubernetes.api.model.HasMetadata> Map<String, T> byName(List<T> objects) {
        Map<String, T> out = new LinkedHashMap<>();
        objects.forEach(o -> out.put(o.getMetadata().getName(), o));
        return out;
    }

    /** The pod's volumes on this machine: hostPath in the fake host, configMap/secret as files (kubelet's job). */
    private void prepareVolumes() throws IOException {
        for (Volume v : spec.getVolumes()) {
            if (v.getHostPath() != null) {
                volumes.put(v.getName(), hostPath(v.getHostPath()));
            } else if (v.getConfigMap() != null) {
                ConfigMap cm = configMaps.get(v.getConfigMap().getName());
                if (cm == null && !Boolean.TRUE.equals(v.getConfigMap().getOptional())) {
                    throw new IOException("volume " + v.getName() + ": ConfigMap " + v.getConfigMap().getName() + " not found");
                }
                volumes.put(v.getName(), writeFiles(v.getName(), cm == null ? Map.of() : cm.getData(), v.getConfigMap().getItems()));
            } else if (v.getSecret() != null) {
                Secret s = secrets.get(v.getSecret().getSecretName());
                if (s == null && !Boolean.TRUE.equals(v.getSecret().getOptional())) {
                    throw new IOException("volume " + v.getName() + ": Secret " + v.getSecret().getSecretName() + " not found");
                }
                volumes.put(v.getName(), writeFiles(v.getName(), s == null ? Map.of() : secretData(s), v.getSecret().getItems()));
            } else {
                throw new IOException("volume " + v.getName() + ": only hostPath, configMap and secret volumes are supported");
            }
        }
    }

    private Path hostPath(HostPathVolumeSource hp) throws IOException {
        if (hp.getPath().startsWith("/dev/")) { // a fake node's devices are this machine's
            Path dev = Path.of(hp.getPath());
            if (!Files.exists(dev)) {
                throw new IOException("hostPath " + hp.getPath() + " does not exist on this machine");
            }
            return dev;
        }
        Path p = host.path(hp.getPath());
        String type = hp.getType() == null ? "" : hp.getType();
        switch (type) {
            case "FileOrCreate" -> {
                Files.createDirectories(p.getParent());
                if (!Files.exists(p)) {
                    Files.createFile(p);
                }
            }
            case "File", "Directory", "CharDevice", "Socket", "BlockDevice" -> {
                if (!Files.exists(p)) {
                    throw new IOException("hostPath " + hp.getPath() + " (type " + type + ") does not exist on the node");
                }
            }
            default -> Files.createDirectories(p); // DirectoryOrCreate, or "" on a node that has the directory
        }
        return p;
    }

    private static Map<String, String> secretData(Secret s) {
        Map<String, String> out = new LinkedHashMap<>();
        if (s.getData() != null) {
            s.getData().forEach((k, v) -> out.put(k, new String(Base64.getDecoder().decode(v), StandardCharsets.UTF_8)));
        }
        if (s.getStringData() != null) {
            out.putAll(s.getStringData());
        }
        return out;
    }

    private Path writeFiles(String volume, Map<String, String> data, List<KeyToPath> items) throws IOException {
        Path d = Files.createDirectories(dir.resolve("volumes").resolve(volume));
        Map<String, String> files = new LinkedHashMap<>();
        if (items == null || items.isEmpty()) {
            files.putAll(data == null ? Map.of() : data);
        } else {
            for (KeyToPath item : items) {
                files.put(item.getPath(), data.get(item.getKey()));
            }
        }
        for (Map.Entry<String, String> f : files.entrySet()) {
            Path file = d.resolve(f.getKey());
            Files.createDirectories(file.getParent());
            Files.writeString(file, f.getValue() == null ? "" : f.getValue(), StandardCharsets.UTF_8);
        }
        return d;
    }

    /** One init container's run: its output and how long it took (wall clock). */
    public record InitRun(String name, Cmd.Result result, Duration took) {
    }

    /** Runs every init container in order; each must exit 0 (kubelet would retry, a test fails). Returns their runs. */
    public List<InitRun> runInitContainers() throws IOException, InterruptedException {
        List<InitRun> out = new ArrayList<>();
        for (Container c : spec.getInitContainers()) {
            long t0 = System.nanoTime();
            Cmd.Result r = Cmd.run(INIT_WITHIN, command(c));
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            if (!r.ok()) {
                throw new IOException("init container " + c.getName() + " of " + who.podName() + " exited " + r.exitCode()
                        + "\nstdout: " + r.stdout().strip() + "\nstderr: " + r.stderr().strip());
            }
            out.add(new InitRun(c.getName(), r, took));
        }
        return out;
    }

    /** Starts container {@code name} (its output to {@code log}); the caller stops it. */
    public ManagedProcess start(String name, Path log) throws IOException {
        Container c = spec.getContainers().stream().filter(x -> x.getName().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("pod has no container " + name));
        return ManagedProcess.start(who.podName() + "/" + name + "@" + who.nodeName(), command(c), Map.of(), log);
    }

    /** The resolved environment of container {@code c}: image, kubelet, then the container's own (last wins). */
    public Map<String, String> env(Container c) throws IOException {
        Map<String, String> env = new LinkedHashMap<>();
        for (String kv : images.apply(c).env()) {
            int eq = kv.indexOf('=');
            env.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        env.putAll(kubeletEnv);
        for (EnvVar e : c.getEnv()) {
            String value = e.getValueFrom() == null ? expand(e.getValue() == null ? "" : e.getValue(), env) : valueFrom(c, e);
            if (value != null) {
                env.put(e.getName(), value);
            }
        }
        return env;
    }

    private String valueFrom(Container c, EnvVar e) throws IOException {
        var from = e.getValueFrom();
        if (from.getFieldRef() != null) {
            return switch (from.getFieldRef().getFieldPath()) {
                case "metadata.name" -> who.podName();
                case "metadata.namespace" -> who.namespace();
                case "spec.nodeName" -> who.nodeName();
                case "spec.serviceAccountName" -> spec.getServiceAccountName();
                case "status.hostIP", "status.podIP" -> who.nodeIp(); // hostNetwork: the pod's IP is the node's
                default -> throw new IOException("env " + e.getName() + " of " + c.getName() + ": fieldRef "
                        + from.getFieldRef().getFieldPath() + " not supported here");
            };
        }
        if (from.getConfigMapKeyRef() != null) {
            var ref = from.getConfigMapKeyRef();
            ConfigMap cm = configMaps.get(ref.getName());
            String v = cm == null || cm.getData() == null ? null : cm.getData().get(ref.getKey());
            if (v == null && !Boolean.TRUE.equals(ref.getOptional())) {
                throw new IOException("env " + e.getName() + ": key " + ref.getKey() + " of ConfigMap " + ref.getName() + " not found");
            }
            return v;
        }
        if (from.getSecretKeyRef() != null) {
            var ref = from.getSecretKeyRef();
            Secret s = secrets.get(ref.getName());
            String v = s == null ? null : secretData(s).get(ref.getKey());
            if (v == null && !Boolean.TRUE.equals(ref.getOptional())) {
                throw new IOException("env " + e.getName() + ": key " + ref.getKey() + " of Secret " + ref.getName() + " not found");
            }
            return v;
        }
        throw new IOException("env " + e.getName() + " of " + c.getName() + ": this valueFrom is not supported here");
    }

    /** Kubernetes' {@code $(VAR)} expansion (unknown references stay as written, {@code $$} is a {@code $}). */
    static String expand(String text, Map<String, String> env) {
        Matcher m = VAR_REF.matcher(text);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String rep = m.group().equals("$$") ? "$" : env.getOrDefault(m.group(1), m.group());
            m.appendReplacement(sb, Matcher.quoteReplacement(rep));
        }
        return m.appendTail(sb).toString();
    }

    /** The bind mounts of container {@code c}: its volumeMounts, plus the service-account token. */
    List<Mount> mounts(Container c) {
        List<Mount> out = new ArrayList<>();
        for (VolumeMount vm : c.getVolumeMounts()) {
            Path src = volumes.get(vm.getName());
            if (src == null) {
                throw new IllegalArgumentException("container " + c.getName() + " mounts unknown volume " + vm.getName());
            }
            if (vm.getSubPath() != null && !vm.getSubPath().isEmpty()) {
                src = src.resolve(vm.getSubPath());
            }
            out.add(new Mount(src, vm.getMountPath(), Boolean.TRUE.equals(vm.getReadOnly())));
        }
        if (serviceAccountDir != null && !Boolean.FALSE.equals(spec.getAutomountServiceAccountToken())) {
            out.add(new Mount(serviceAccountDir, SERVICE_ACCOUNT_DIR, true));
        }
        return out;
    }

    /** {@code ip netns exec <node> unshare --mount ... sh -c <script>}: what runs container {@code c}. */
    List<String> command(Container c) throws IOException {
        Map<String, String> env = env(c);
        UnpackedImage image = images.apply(c);
        List<String> argv = new ArrayList<>();
        c.getCommand().forEach(a -> argv.add(expand(a, env)));
        c.getArgs().forEach(a -> argv.add(expand(a, env)));
        if (argv.isEmpty()) {
            throw new IOException("container " + c.getName() + " has no command (image entrypoints are not read here)");
        }
        Path cdir = Files.createDirectories(dir.resolve("containers").resolve(c.getName()));
        Path upper = Files.createDirectories(cdir.resolve("upper"));
        Path work = Files.createDirectories(cdir.resolve("work"));
        Path merged = Files.createDirectories(cdir.resolve("rootfs"));
        StringBuilder s = new StringBuilder("set -eu\n");
        s.append("M=").append(q(merged.toString())).append('\n');
        s.append("mount -t overlay overlay -o ").append(q("lowerdir=" + image.lowerDirs() + ",upperdir=" + upper + ",workdir=" + work))
                .append(" \"$M\"\n");
        s.append("mkdir -p \"$M/proc\" \"$M/sys\" \"$M/dev\"\n");
        s.append("mount -t proc proc \"$M/proc\"\n");
        if (capabilities(c).isPresent()) {
            // as containerd's default spec for an unprivileged container: /proc/sys read-only
            s.append("mount --bind \"$M/proc/sys\" \"$M/proc/sys\" && mount -o remount,bind,ro \"$M/proc/sys\"\n");
        }
        s.append("mount -t sysfs sysfs \"$M/sys\"\n"); // this network namespace's devices
        s.append("mount --rbind /dev \"$M/dev\"\n");
        for (Mount m : mounts(c)) {
            String target = "\"$M\"/" + q(RootfsPaths.resolve(image.rootfs(), m.target()));
            if (Files.isDirectory(m.source())) {
                s.append("mkdir -p ").append(target).append('\n');
            } else {
                s.append("mkdir -p \"$(dirname ").append(target).append(")\" && touch ").append(target).append('\n');
            }
            s.append("mount --bind ").append(q(m.source().toString())).append(' ').append(target).append('\n');
            if (m.readOnly()) {
                s.append("mount -o remount,bind,ro ").append(target).append('\n');
            }
        }
        java.util.Optional<String> caps = capabilities(c);
        String setpriv = null;
        if (caps.isPresent() && Files.isExecutable(image.rootfs().resolve("usr/bin/setpriv"))) {
            setpriv = "/usr/bin/setpriv";
        } else if (caps.isPresent() && Files.exists(image.rootfs().resolve("lib64/ld-linux-x86-64.so.2"))) {
            // an image without setpriv (ours has none since its base is a few packages): this machine's
            // setpriv and its one library on a tmpfs inside the root, run by the image's own loader, so
            // the capabilities still drop after the chroot (the harness's tool, standing in for the runtime)
            s.append("mkdir -p \"$M/.jflannel-harness\" && mount -t tmpfs -o size=4m harness \"$M/.jflannel-harness\"\n");
            s.append("cp /usr/bin/setpriv /lib/x86_64-linux-gnu/libcap-ng.so.0 \"$M/.jflannel-harness/\"\n");
            setpriv = "/lib64/ld-linux-x86-64.so.2 --library-path /.jflannel-harness /.jflannel-harness/setpriv";
        }
        s.append("exec /usr/bin/env -i");
        env.forEach((k, v) -> s.append(' ').append(q(k + "=" + v)));
        if (setpriv != null) {
            // chroot first, then setpriv drops to exactly the container's set: not even
            // SYS_CHROOT (which the chroot standing in for the runtime's pivot_root needs) stays
            s.append(" /usr/sbin/chroot \"$M\" ").append(setpriv).append(" --inh-caps -all --ambient-caps -all --bounding-set ")
                    .append(q(caps.get())).append(" --");
        } else {
            // an image without setpriv: this machine's, before the chroot, which then keeps SYS_CHROOT
            caps.ifPresent(set -> s.append(" /usr/bin/setpriv --inh-caps -all --bounding-set ").append(q(set + ",+sys_chroot"))
                    .append(" --"));
            s.append(" /usr/sbin/chroot \"$M\"");
        }
        argv.forEach(a -> s.append(' ').append(q(a)));
        s.append('\n');
        Files.writeString(cdir.resolve("run.sh"), s.toString(), StandardCharsets.UTF_8); // for whoever debugs a failure
        return List.of("ip", "netns", "exec", netns, "unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
                s.toString());
    }

    /**
     * setpriv's bounding set for {@code c} ({@code -all,+net_admin,...}), empty for a privileged container.
     * A container that lists {@code capabilities.add} gets exactly those (minus {@code drop}), stricter
     * than a runtime, which adds them to its default set: so a manifest's list is proved to be all its
     * container needs (least privilege). One without gets the runtime's default set.
     */
    static java.util.Optional<String> capabilities(Container c) {
        var sc = c.getSecurityContext();
        if (sc != null && Boolean.TRUE.equals(sc.getPrivileged())) {
            return java.util.Optional.empty();
        }
        java.util.Set<String> caps = new java.util.TreeSet<>();
        List<String> add = sc == null || sc.getCapabilities() == null || sc.getCapabilities().getAdd() == null ? List.of()
                : sc.getCapabilities().getAdd();
        if (add.isEmpty()) {
            caps.addAll(RUNTIME_DEFAULT_CAPS);
        }
        add.forEach(a -> caps.add(a.replaceFirst("^CAP_", "")));
        if (sc != null && sc.getCapabilities() != null && sc.getCapabilities().getDrop() != null) {
            List<String> drop = sc.getCapabilities().getDrop();
            if (drop.contains("ALL")) {
                caps.retainAll(add.stream().map(a -> a.replaceFirst("^CAP_", "")).toList());
            }
            drop.forEach(d -> caps.remove(d.replaceFirst("^CAP_", "")));
        }
        StringBuilder b = new StringBuilder("-all");
        caps.forEach(cap -> b.append(",+").append(cap.toLowerCase(java.util.Locale.ROOT)));
        return java.util.Optional.of(b.toString());
    }

    static String q(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }
}
