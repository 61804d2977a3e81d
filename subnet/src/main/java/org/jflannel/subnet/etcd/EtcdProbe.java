package org.jflannel.subnet.etcd;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours (issue 23): tells whether any etcd endpoint accepts TCP connections, and waits until one does.
 *
 * <p>Why: a gRPC channel that failed to connect backs off its reconnects (1 s, ×1.6 each time, up to 2 min),
 * and a call or watch on it waits for that timer, not for etcd: after a 20 s outage a node saw etcd again
 * up to 10 s late. Instead, once etcd is unreachable the lease source waits here, with one TCP connect per
 * endpoint every {@code interval} ±50 % (random, so that 10,000 nodes neither probe nor reconnect in step),
 * and then opens a fresh client, which connects at once. A connect costs etcd's kernel a SYN and an RST while
 * it is down and one accepted-and-closed socket when it is up; no TLS, no gRPC.
 */
final class EtcdProbe {
    private static final Logger LOG = LoggerFactory.getLogger(EtcdProbe.class);
    /** How often a wait logs that etcd is still unreachable. */
    private static final long LOG_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final List<InetSocketAddress> endpoints;
    private final Duration interval;

    EtcdProbe(List<String> endpoints, Duration interval) {
        this.endpoints = new ArrayList<>();
        for (String e : endpoints) {
            InetSocketAddress a = address(e);
            if (a != null) {
                this.endpoints.add(a);
            }
        }
        this.interval = interval;
    }

    /**
     * {@code http(s)://host:port} (port 2379 when absent); null for what a TCP connect cannot probe
     * (unix sockets, unparsable text), which then counts as reachable: the caller falls back to its calls.
     */
    static InetSocketAddress address(String endpoint) {
        try {
            URI u = URI.create(endpoint.contains("://") ? endpoint : "http://" + endpoint);
            if (u.getHost() == null || !(u.getScheme().equals("http") || u.getScheme().equals("https"))) {
                return null;
            }
            return InetSocketAddress.createUnresolved(u.getHost(), u.getPort() < 0 ? 2379 : u.getPort());
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private List<String> names() {
        return endpoints.stream().map(e -> e.getHostString() + ":" + e.getPort()).toList();
    }

    /** True when an endpoint accepts a TCP connection now (or none can be probed). */
    boolean reachable() {
        if (endpoints.isEmpty()) {
            return true;
        }
        int timeoutMs = (int) Math.max(1, Math.min(interval.toMillis(), 1000));
        for (InetSocketAddress e : endpoints) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(e.getHostString(), e.getPort()), timeoutMs);
                return true;
            } catch (IOException | IllegalArgumentException | SecurityException ex) {
                // refused, unreachable, unresolvable, timed out: try the next one
            }
        }
        return false;
    }

    /**
     * Probes until an endpoint answers, {@code stop} says so or {@code max} has passed; returns whether etcd
     * is reachable. Logs once when it starts waiting, every 10 s while it waits, and when etcd is back.
     */
    boolean await(Duration max, BooleanSupplier stop, String who) throws InterruptedException {
        if (reachable()) {
            return true;
        }
        long start = System.nanoTime();
        long deadline = start + max.toNanos();
        long nextLog = start + LOG_EVERY_NANOS;
        LOG.warn("etcd unreachable, probing who={} endpoints={} intervalMs={}", who, names(), interval.toMillis());
        while (!stop.getAsBoolean()) {
            long now = System.nanoTime();
            if (now - deadline >= 0) {
                return false;
            }
            long pause = (long) (interval.toNanos() * (0.5 + ThreadLocalRandom.current().nextDouble()));
            TimeUnit.NANOSECONDS.sleep(Math.min(pause, Math.max(0, deadline - now)));
            if (reachable()) {
                LOG.info("etcd reachable again who={} waitedMs={}", who, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                return true;
            }
            if (System.nanoTime() - nextLog >= 0) {
                LOG.warn("etcd still unreachable who={} waitedMs={}", who, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                nextLog += LOG_EVERY_NANOS;
            }
        }
        return false;
    }
}
