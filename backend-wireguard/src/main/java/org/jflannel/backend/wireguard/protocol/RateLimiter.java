package org.jflannel.backend.wireguard.protocol;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * Handshake messages per source address under load, as the kernel's {@code ratelimiter.c} (and
 * wireguard-go's): a token bucket per IPv4 address or IPv6 /64 (one host may own a whole /64; the
 * port is not part of it), 20 messages a second with a burst of 5. Only messages that passed the
 * cookie gate (a valid mac2, so a source that can receive at its address) are asked: a peer that
 * proved its address cannot make us do more than 20 Curve25519 handshakes a second for it, and a
 * flood from one address leaves the others' handshakes alone. A source idle for a second has a
 * full bucket again and is forgotten; the table holds at most {@code maxSources} (the kernel's
 * 65,536 on a host with more than 1 GiB), and a new source beyond that is refused until old ones
 * are forgotten. Called from the socket threads, under its own lock.
 */
final class RateLimiter {
    static final int PER_SECOND = 20;
    static final int BURST = 5;
    static final int MAX_SOURCES = 65_536;
    private static final long COST = 1_000_000_000L / PER_SECOND;
    private static final long MAX_TOKENS = COST * BURST;
    private static final long FORGET_AFTER_NANOS = 1_000_000_000L;

    /** An IPv4 address (as its {@code ::ffff:a.b.c.d} halves) or an IPv6 /64 (low half zero, marked apart from IPv4). */
    private record Source(long high, long low) {
        static Source of(Endpoint e) {
            return e.ipv4() ? new Source(0, e.low()) : new Source(e.high(), 1);
        }
    }

    private static final class Bucket {
        long tokens;
        long lastNanos;
    }

    private final int maxSources;
    private final Map<Source, Bucket> buckets = new HashMap<>();
    private long lastSweepNanos;
    private boolean swept;

    RateLimiter(int maxSources) {
        this.maxSources = maxSources;
    }

    RateLimiter() {
        this(MAX_SOURCES);
    }

    /** True when one more handshake message from {@code from}'s address may be processed now. */
    synchronized boolean allow(Endpoint from, long nowNanos) {
        sweep(nowNanos);
        Source s = Source.of(from);
        Bucket b = buckets.get(s);
        if (b == null) {
            if (buckets.size() >= maxSources) {
                return false;
            }
            b = new Bucket();
            b.tokens = MAX_TOKENS - COST;
            b.lastNanos = nowNanos;
            buckets.put(s, b);
            return true;
        }
        long tokens = Math.min(MAX_TOKENS, b.tokens + Math.max(0, nowNanos - b.lastNanos));
        b.lastNanos = nowNanos;
        boolean allowed = tokens >= COST;
        b.tokens = allowed ? tokens - COST : tokens;
        return allowed;
    }

    /** Sources currently remembered. */
    synchronized int sources() {
        return buckets.size();
    }

    /** Once a second: sources idle for a second (their buckets full again) forgotten. */
    private void sweep(long nowNanos) {
        if (swept && nowNanos - lastSweepNanos < FORGET_AFTER_NANOS) {
            return;
        }
        swept = true;
        lastSweepNanos = nowNanos;
        for (Iterator<Bucket> it = buckets.values().iterator(); it.hasNext(); ) {
            if (nowNanos - it.next().lastNanos >= FORGET_AFTER_NANOS) {
                it.remove();
            }
        }
    }
}
