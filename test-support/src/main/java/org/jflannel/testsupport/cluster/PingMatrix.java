package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Pod-to-pod reachability: one echo for every ordered pair of distinct pods, asked again (at most
 * {@link #RETRIES} times, with a longer wait) when it got no answer. The first packet to a peer can
 * take seconds on a slow or busy machine (a WireGuard handshake of ours in userspace, under the kernel
 * VM's emulation: no vector units), and a pair cut off for good stays without an answer through every try.
 */
public record PingMatrix(List<Pod> pods, List<Result> results, Pod.Family family) {
    private static final int PARALLEL = 4;
    /** Echoes after a first one without an answer, each given {@link #RETRY_WAIT_SECONDS}. */
    static final int RETRIES = 2;
    private static final int RETRY_WAIT_SECONDS = 5;

    /** One pair's outcome. */
    public record Result(Pod from, Pod to, boolean answered) {
    }

    public PingMatrix {
        pods = List.copyOf(pods);
        results = List.copyOf(results);
    }

    /** An IPv4 matrix. */
    public PingMatrix(List<Pod> pods, List<Result> results) {
        this(pods, results, Pod.Family.IPV4);
    }

    /** Every ordered pair of distinct {@code pods}, one echo each, a few pairs at a time. */
    static PingMatrix measure(List<Pod> pods) throws IOException, InterruptedException {
        return measure(pods, Pod.Family.IPV4);
    }

    /** The same over {@code family}'s addresses. */
    static PingMatrix measure(List<Pod> pods, Pod.Family family) throws IOException, InterruptedException {
        ExecutorService pool = Executors.newFixedThreadPool(PARALLEL, r -> {
            Thread t = new Thread(r, "ping-matrix");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<Result>> futures = new ArrayList<>();
            for (Pod from : pods) {
                for (Pod to : pods) {
                    if (from != to) {
                        futures.add(pool.submit(() -> new Result(from, to, echoWithRetries(from, to, family))));
                    }
                }
            }
            List<Result> results = new ArrayList<>();
            for (Future<Result> f : futures) {
                results.add(get(f));
            }
            return new PingMatrix(pods, results, family);
        } finally {
            pool.shutdownNow();
        }
    }

    /** An echo, then up to {@link #RETRIES} more while none is answered; a pair answered late is logged. */
    private static boolean echoWithRetries(Pod from, Pod to, Pod.Family family) throws IOException, InterruptedException {
        if (echo(from, to, family, 2)) {
            return true;
        }
        for (int i = 1; i <= RETRIES; i++) {
            if (echo(from, to, family, RETRY_WAIT_SECONDS)) {
                System.out.println("ping matrix: " + from.name() + " -> " + to.name() + " " + to.address(family)
                        + " answered only on try " + (i + 1));
                return true;
            }
        }
        return false;
    }

    /** One ICMP echo from pod {@code from} to {@code to}'s address, 2 s to answer. */
    static boolean echo(Pod from, Pod to) throws IOException, InterruptedException {
        return echo(from, to, Pod.Family.IPV4);
    }

    /** One ICMP (or ICMPv6) echo from pod {@code from} to {@code to}'s address of {@code family}, 2 s to answer. */
    static boolean echo(Pod from, Pod to, Pod.Family family) throws IOException, InterruptedException {
        return echo(from, to, family, 2);
    }

    private static boolean echo(Pod from, Pod to, Pod.Family family, int waitSeconds) throws IOException, InterruptedException {
        return Cmd.run(Duration.ofSeconds(waitSeconds + 8), List.of("ip", "netns", "exec", from.namespace(),
                "ping", family.flag(), "-n", "-q", "-c", "1", "-W", Integer.toString(waitSeconds), to.address(family))).ok();
    }

    private static Result get(Future<Result> f) throws IOException, InterruptedException {
        try {
            return f.get();
        } catch (ExecutionException e) {
            throw new IOException("ping failed to run: " + e.getCause(), e.getCause());
        }
    }

    public boolean allAnswered() {
        return results.stream().allMatch(Result::answered);
    }

    public List<Result> failures() {
        return results.stream().filter(r -> !r.answered()).toList();
    }

    /** A table: rows are sources, columns destinations, {@code ok}, {@code --} (no answer) or {@code .} (self). */
    public String render() {
        int w = pods.stream().mapToInt(p -> p.name().length()).max().orElse(4) + 1;
        int aw = family == Pod.Family.IPV6 ? 28 : 16;
        StringBuilder sb = new StringBuilder(pad("from \\ to", w + aw));
        for (Pod p : pods) {
            sb.append(pad(p.name(), w));
        }
        sb.append('\n');
        for (Pod from : pods) {
            sb.append(pad(from.name() + " " + from.address(family), w + aw));
            for (Pod to : pods) {
                sb.append(pad(from == to ? "." : answered(from, to) ? "ok" : "--", w));
            }
            sb.append('\n');
        }
        long ok = results.stream().filter(Result::answered).count();
        return sb.append(ok).append('/').append(results.size()).append(" pairs answered").toString();
    }

    private boolean answered(Pod from, Pod to) {
        return results.stream().anyMatch(r -> r.from() == from && r.to() == to && r.answered());
    }

    private static String pad(String s, int w) {
        return s.length() >= w ? s + " " : s + " ".repeat(w - s.length());
    }
}
