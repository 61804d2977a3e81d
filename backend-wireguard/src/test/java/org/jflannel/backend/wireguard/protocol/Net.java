package org.jflannel.backend.wireguard.protocol;

import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * An in-memory underlay for protocol tests: devices at endpoints, a shared fake clock, datagrams
 * queued and delivered by {@link #pump} (so no call recursion), an optional filter that drops or
 * records datagrams in flight, and what each device delivered to its "TUN".
 */
final class Net {
    record Datagram(Endpoint from, Endpoint to, byte[] bytes) {
        int type() {
            return bytes[0];
        }
    }

    long nowNanos = 1_000_000_000L;
    Instant wall = Instant.parse("2026-11-25T12:00:00Z");
    final ArrayDeque<Datagram> inFlight = new ArrayDeque<>();
    final List<Datagram> sent = new ArrayList<>();
    final Map<Endpoint, Device> devices = new HashMap<>();
    final Map<Device, List<byte[]>> delivered = new HashMap<>();
    Predicate<Datagram> drop = d -> false;
    /** The device that says it is under load (cookies), if any. */
    Endpoint loaded;
    /** The devices' randomness, counting what is drawn from it (keys and handshakes must; the data path must not). */
    final CountingRandom random = new CountingRandom();

    static final class CountingRandom extends SecureRandom {
        long draws;

        @Override
        public synchronized void nextBytes(byte[] bytes) {
            draws++;
            super.nextBytes(bytes);
        }
    }

    Device device(Endpoint at, byte[] privateKey, Timings timings) {
        Device[] self = new Device[1];
        Device d = new Device(new Device.Config(privateKey, timings, () -> nowNanos, () -> wall, random, 1420, () -> at.equals(loaded), () -> { }),
                new Device.Wire() {
                    @Override
                    public void send(byte[] datagram, int off, int len, Endpoint to) {
                        Datagram g = new Datagram(at, to, Arrays.copyOfRange(datagram, off, off + len));
                        sent.add(g);
                        inFlight.add(g);
                    }

                    @Override
                    public void deliver(byte[] packet, int off, int len) {
                        delivered.get(self[0]).add(Arrays.copyOfRange(packet, off, off + len));
                    }
                });
        self[0] = d;
        devices.put(at, d);
        delivered.put(d, new ArrayList<>());
        return d;
    }

    void pump() {
        for (int guard = 0; guard < 10_000 && !inFlight.isEmpty(); guard++) {
            Datagram g = inFlight.poll();
            Device to = devices.get(g.to());
            if (to != null && !drop.test(g)) {
                to.receive(g.bytes(), 0, g.bytes().length, g.from());
            }
        }
    }

    void advance(Duration d) {
        nowNanos += d.toNanos();
        wall = wall.plus(d);
        for (Device dev : devices.values()) {
            dev.tick();
        }
        pump();
    }

    /** Advances in 50 ms steps, as a data plane ticks, so timers with jitter fire apart. */
    void advanceInSteps(Duration d) {
        for (long t = 0; t < d.toMillis(); t += 50) {
            advance(Duration.ofMillis(50));
        }
    }

    long sentOfType(int type) {
        return sent.stream().filter(g -> g.type() == type).count();
    }

    /** A minimal IPv4 packet from {@code src} to {@code dst} with {@code payload} bytes of data. */
    static byte[] ipv4(int src, int dst, int payload) {
        byte[] p = new byte[20 + payload];
        p[0] = 0x45;
        p[2] = (byte) (p.length >>> 8);
        p[3] = (byte) p.length;
        p[8] = 64;
        p[9] = 17;
        for (int i = 0; i < 4; i++) {
            p[12 + i] = (byte) (src >>> (24 - 8 * i));
            p[16 + i] = (byte) (dst >>> (24 - 8 * i));
        }
        for (int i = 0; i < payload; i++) {
            p[20 + i] = (byte) (i * 31 + 5);
        }
        return p;
    }

    static int ip(int a, int b, int c, int d) {
        return a << 24 | b << 16 | c << 8 | d;
    }
}
