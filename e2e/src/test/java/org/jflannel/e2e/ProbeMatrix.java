package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.netpol.Protocol;
import org.jflannel.testsupport.netns.Reachability;

/**
 * The kernel's truth table of a {@link NetpolModel}: a TCP connect (the SYN-ACK back) or a UDP echo (the reply
 * back) from every pod to every other, many at once on a bounded pool. A probe waits {@link #FIRST_WAIT} once;
 * only a probe the expectation allows and that failed is tried again ({@link #RETRIES} times, longer), so a
 * denied pair costs one wait and a slow moment on a busy machine does not read as a denial. {@link #await}
 * polls until a whole round equals the expectation, re-probing only the pairs still off while the daemons
 * converge, then once more every pair: what it returns is one complete round that matched.
 */
final class ProbeMatrix {
    static final Duration CONVERGE_WITHIN = Duration.ofSeconds(60);
    static final Duration FIRST_WAIT = Duration.ofMillis(500);
    static final Duration RETRY_WAIT = Duration.ofSeconds(2);
    static final int RETRIES = 2;
    private static final int THREADS = 48;

    /** One probe: from pod {@code from} to pod {@code to} (ids like {@code x/a}), protocol and port. */
    record Probe(String from, String to, Protocol protocol, int port) {
        @Override
        public String toString() {
            return from + "->" + to + ":" + protocol.name().toLowerCase(java.util.Locale.ROOT) + "/" + port;
        }
    }

    private final NetpolModel model;

    ProbeMatrix(NetpolModel model) {
        this.model = model;
    }

    /**
     * Waits (at most {@link #CONVERGE_WITHIN}) until one complete round of {@code expected}'s probes equals it. While
     * some are off, only those are probed again, each once; a complete round follows, in which an expected-allowed
     * probe that failed is tried again before it counts (a complete first round that matches without that is as good).
     */
    Map<Probe, Boolean> await(String what, Map<Probe, Boolean> expected) throws Exception {
        long start = System.nanoTime();
        long end = start + CONVERGE_WITHIN.toNanos();
        List<Probe> pending = new ArrayList<>(expected.keySet());
        boolean retry = false;
        int rounds = 0;
        while (true) {
            boolean full = pending.size() == expected.size();
            Map<Probe, Boolean> got = round(pending, expected, retry);
            rounds++;
            List<Probe> off = pending.stream().filter(p -> !expected.get(p).equals(got.get(p))).toList();
            if (off.isEmpty() && full) {
                System.out.println("netpol: " + what + ": truth table of " + expected.size() + " probes ("
                        + expected.values().stream().filter(v -> !v).count() + " denied) after "
                        + (System.nanoTime() - start) / 1_000_000 + " ms, " + rounds + " rounds");
                return got;
            }
            if (System.nanoTime() - end > 0) {
                Map<Probe, Boolean> wrong = new LinkedHashMap<>();
                off.forEach(p -> wrong.put(p, got.get(p)));
                assertThat(wrong).as("%s: probes off the expectation %s after the change (true: got through)",
                        what, CONVERGE_WITHIN).isEmpty();
            }
            if (!off.isEmpty()) {
                System.out.println("netpol: " + what + ": not yet (" + off.size() + " off): "
                        + off.stream().limit(12).map(p -> p + (expected.get(p) ? " denied" : " passed")).toList());
            }
            retry = off.isEmpty();
            pending = off.isEmpty() ? new ArrayList<>(expected.keySet()) : new ArrayList<>(off);
        }
    }

    /** One round of {@code probes}; with {@code retryAllowed}, an expected-allowed failure is tried again before it counts. */
    Map<Probe, Boolean> round(List<Probe> probes, Map<Probe, Boolean> expected, boolean retryAllowed) throws Exception {
        Map<String, NetNs> ns = new LinkedHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(THREADS, r -> {
            Thread t = new Thread(r, "netpol-probe");
            t.setDaemon(true);
            return t;
        });
        try {
            for (String id : model.ids()) {
                ns.put(id, NetNs.open(model.harnessPod(id).namespace()));
            }
            Map<Probe, Future<Boolean>> f = new LinkedHashMap<>();
            for (Probe p : probes) {
                boolean retry = retryAllowed && Boolean.TRUE.equals(expected.get(p));
                f.put(p, pool.submit(() -> {
                    if (once(ns.get(p.from()), p, FIRST_WAIT)) {
                        return true;
                    }
                    for (int i = 0; retry && i < RETRIES; i++) {
                        if (once(ns.get(p.from()), p, RETRY_WAIT)) {
                            return true;
                        }
                    }
                    return false;
                }));
            }
            Map<Probe, Boolean> got = new LinkedHashMap<>();
            for (Map.Entry<Probe, Future<Boolean>> e : f.entrySet()) {
                got.put(e.getKey(), e.getValue().get(60, TimeUnit.SECONDS));
            }
            return got;
        } finally {
            pool.shutdownNow();
            ns.values().forEach(NetNs::close);
        }
    }

    private boolean once(NetNs from, Probe p, Duration wait) throws Exception {
        return p.protocol() == Protocol.TCP ? Reachability.tcpConnects(from, model.inet(p.to()), p.port(), wait)
                : Reachability.udpEchoes(from, model.inet(p.to()), p.port(), wait);
    }
}
