package org.jflannel.flanneld;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * bin/flanneld maps the AppCDS archive the build dumped for the subnet manager it will run (etcd or
 * kube), and the archive matches the jar: run with {@code -Xshare:on}, under which the JVM refuses to
 * start rather than silently fall back, and with class loading logged to see where the classes come
 * from. Runs after {@code package} (failsafe), which is when the archives exist.
 */
@Tag("e2e")
class LauncherArchiveIT {
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
    private static final Path TARGET = ROOT.resolve("flanneld/target");

    @Test
    void etcdModeMapsTheEtcdArchive() throws Exception {
        Run r = launch(Map.of(), "--version");
        r.assertHas("Opened archive " + TARGET.resolve("flanneld-etcd.jsa") + ".");
        r.assertHas("org.jflannel.flanneld.Main source: shared objects file");
    }

    @Test
    void kubeModeMapsTheKubeArchiveFromTheFlagOrTheVariable() throws Exception {
        for (Run r : List.of(launch(Map.of(), "--kube-subnet-mgr", "--version"),
                launch(Map.of(), "-kube-subnet-mgr=true", "--version"),
                launch(Map.of("FLANNELD_KUBE_SUBNET_MGR", "true"), "--version"))) {
            r.assertHas("Opened archive " + TARGET.resolve("flanneld-kube.jsa") + ".");
            r.assertHas("org.jflannel.flanneld.Main source: shared objects file");
        }
    }

    @Test
    void theFlagWinsOverTheVariable() throws Exception {
        Run r = launch(Map.of("FLANNELD_KUBE_SUBNET_MGR", "true"), "--kube-subnet-mgr=false", "--version");
        r.assertHas("Opened archive " + TARGET.resolve("flanneld-etcd.jsa") + ".");
    }

    @Test
    void everyClassOfTheDaemonsStartIsInTheArchive() throws Exception {
        // the classes --version loads: the JVM, logging, flag parsing; none of ours may come from the jar
        // (lambda classes aside: of two identical call sites the list can hold only one, the JVM spins the other)
        Run r = launch(Map.of(), "--version");
        List<String> fromJar = new ArrayList<>();
        for (String line : r.output.split("\n")) {
            if (line.contains("[class,load] org.jflannel.") && !line.contains("$$Lambda$")
                    && !line.contains("source: shared objects file")) {
                fromJar.add(line);
            }
        }
        assertThat(fromJar).as("classes not in flanneld/cds/etcd.classlist: run flanneld/cds/update-classlist.sh").isEmpty();
    }

    @Test
    void cdsOffMapsNoArchiveOfOurs() throws Exception {
        Run r = launch(Map.of("FLANNELD_CDS", "0"), "--version");
        assertThat(r.output.contains("flanneld-etcd.jsa") || r.output.contains("flanneld-kube.jsa")).isFalse();
        r.assertHas("org.jflannel.flanneld.Main source: file:");
    }

    private record Run(int exit, String output) {
        void assertHas(String text) {
            assertThat(output.contains(text)).as("launcher output has \"%s\"", text).isTrue();
        }
    }

    private static Run launch(Map<String, String> env, String... args) throws IOException, InterruptedException {
        assertThat(TARGET.resolve("flanneld-etcd.jsa")).exists();
        List<String> cmd = new ArrayList<>(List.of(ROOT.resolve("bin/flanneld").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("FLANNELD_KUBE_SUBNET_MGR");
        pb.environment().remove("FLANNELD_CDS");
        pb.environment().putAll(env);
        pb.environment().put("FLANNELD_JAVA_OPTS", "-Xshare:on -Xlog:cds=info -Xlog:class+load=info");
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        Run r = new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8));
        assertThat(r.exit).as(r.output).isZero();
        assertThat(Files.isRegularFile(ROOT.resolve("bin/flanneld"))).isTrue();
        return r;
    }
}
