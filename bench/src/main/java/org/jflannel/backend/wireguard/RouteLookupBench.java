package org.jflannel.backend.wireguard;

import java.security.SecureRandom;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jflannel.backend.wireguard.crypto.X25519;
import org.jflannel.backend.wireguard.protocol.AllowedIp;
import org.jflannel.backend.wireguard.protocol.Device;
import org.jflannel.backend.wireguard.protocol.Endpoint;
import org.jflannel.backend.wireguard.protocol.Peer;
import org.jflannel.backend.wireguard.protocol.Timings;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cryptokey routing's lookup, which the userspace WireGuard runs for every packet it receives (is the
 * inner source in the sending peer's allowed IPs?) and for every TUN read (which peer?): {@link Device#route}
 * over a cluster's worth of peers, each with its lease's /24 as flannel gives it (and, in {@code mixed}, a
 * /32 and a /16 more every tenth peer, so three prefix lengths). The addresses looked up cycle through every
 * peer's subnet, so the average is over the table's positions. Time per lookup:
 * {@code java -jar bench/target/benchmarks.jar RouteLookupBench}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RouteLookupBench {
    @Param({"1", "100", "1000"})
    int peers;

    @Param({"false", "true"})
    boolean mixed;

    private int[] addresses;
    private int next;
    private Device device;

    @Setup
    public void setUp() {
        SecureRandom random = new SecureRandom(new byte[] {1});
        byte[] key = new byte[32];
        random.nextBytes(key);
        device = new Device(new Device.Config(key, Timings.standard(), System::nanoTime, Instant::now, random, 1420,
                () -> false, () -> { }), new Device.Wire() {
                    @Override
                    public void send(byte[] d, int off, int len, Endpoint to) {
                    }

                    @Override
                    public void deliver(byte[] p, int off, int len) {
                    }
                });
        addresses = new int[peers];
        for (int i = 0; i < peers; i++) {
            byte[] peerKey = new byte[32];
            random.nextBytes(peerKey);
            int subnet = 0x0af40000 + (i << 8); // 10.244.i.0/24 (and on into 10.245… past 255)
            List<AllowedIp> ips = mixed && i % 10 == 0
                    ? List.of(new AllowedIp(subnet, 24), new AllowedIp(0x0b000000 + i, 32), new AllowedIp(0x0c000000 + (i << 16), 16))
                    : List.of(new AllowedIp(subnet, 24));
            device.setPeer(X25519.publicKey(peerKey), null, new Endpoint(0xc0000200 + i, 51820), ips, 0);
            addresses[i] = subnet + 2;
        }
        for (int i = 0; i < peers; i++) {
            if (device.route(addresses[i]) == null) {
                throw new IllegalStateException("no route for peer " + i);
            }
        }
    }

    @Benchmark
    public Peer route() {
        int i = next;
        next = i + 1 == addresses.length ? 0 : i + 1;
        return device.route(addresses[i]);
    }
}
