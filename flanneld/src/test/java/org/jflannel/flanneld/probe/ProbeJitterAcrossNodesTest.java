package org.jflannel.flanneld.probe;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Two nodes' probe rounds must not fall into step: each daemon (a process of its own) draws its own jitter. The
 * schedule is made as {@link Prober} makes it (on the starting thread) and drawn from on another thread, as the
 * {@code peer-probe} thread does, in two JVMs; their rounds must differ. (A {@code ThreadLocalRandom} shared with
 * another thread gives that thread the same sequence in every JVM: two nodes then probed each other in lockstep,
 * 26 ms apart for a whole run, docs/benchmarks.md "Session 12, the gpe pair's ledger".)
 */
class ProbeJitterAcrossNodesTest {
    /** One "node": prints the first round's offset and five gaps between rounds, in nanoseconds. */
    public static void main(String[] args) throws InterruptedException {
        ProbeSchedule schedule = Prober.schedule(new ProbeSettings(Duration.ofSeconds(10), Duration.ofSeconds(1), 1472, null));
        StringBuilder out = new StringBuilder();
        Thread t = new Thread(() -> {
            long due = schedule.firstDue(0);
            out.append(due);
            for (int i = 0; i < 5; i++) {
                long next = schedule.nextDue(due);
                out.append(' ').append(next - due);
                due = next;
            }
        }, "peer-probe");
        t.start();
        t.join();
        System.out.println(out);
    }

    private static String node() throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xshare:auto", "-cp", System.getProperty("java.class.path"), ProbeJitterAcrossNodesTest.class.getName()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("node exited").isTrue();
        assertThat(p.exitValue()).as("node exit status, output: " + out).isZero();
        return out;
    }

    @Test
    void twoNodesDrawDifferentRounds() throws Exception {
        String a = node();
        String b = node();
        assertThat(a.split(" ")).as("node a: " + a).hasSize(6);
        assertThat(b.split(" ")).as("node b: " + b).hasSize(6);
        assertThat(a).as("the two nodes' first round offset and gaps").isNotEqualTo(b);
    }
}
