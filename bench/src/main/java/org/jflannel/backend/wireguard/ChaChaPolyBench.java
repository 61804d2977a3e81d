package org.jflannel.backend.wireguard;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.jflannel.backend.wireguard.crypto.ChaChaPoly;
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
 * What one ChaCha20-Poly1305 seal or open costs (issue 22): the bare JDK cipher (a new {@code Cipher}
 * per message, or one reused with a fresh key and nonce spec per message, on arrays, heap buffers
 * and direct buffers), our {@link ChaChaPoly}, and the whole per-datagram path of {@link Device}
 * (counter reserved, header, padding, seal; open by receiver index). Payload 1,420 bytes (what a
 * TSO segment becomes with the device MTU 1,420: no padding) and 64 KB. Time per operation; on the
 * shared machine compare the CPU time per operation of {@link CpuTimeProfiler} (bytes per CPU-second
 * = size / cpu.ns/op). Run under the daemon's runtime (Temurin 25):
 * {@code /usr/lib/jvm/temurin-25-jdk-amd64/bin/java -jar bench/target/benchmarks.jar ChaChaPolyBench
 * -prof org.jflannel.backend.wireguard.CpuTimeProfiler}. The forks get the opens and exports the
 * daemon's jar manifest gives ({@code ours*} and {@code device*} then run the intrinsic engine, as the
 * daemon does; the setup fails when they do not).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens=java.base/com.sun.crypto.provider=ALL-UNNAMED", "--add-exports=java.base/sun.security.util.math=ALL-UNNAMED"})
public class ChaChaPolyBench {
    @Param({"1420", "65536"})
    int size;

    private final byte[] key = new byte[32];
    private byte[] plain;
    private byte[] out;
    private byte[] sealed;
    private ByteBuffer directIn;
    private ByteBuffer directOut;
    private ByteBuffer heapIn;
    private ByteBuffer heapOut;
    private Cipher cipher;
    private final ChaChaPoly ours = new ChaChaPoly();
    private final byte[] nonce = new byte[12];
    private long counter;

    @Setup
    public void setUp() throws GeneralSecurityException {
        if (!ChaChaPoly.path().equals("jdk-intrinsics")) {
            throw new IllegalStateException("ChaChaPoly runs " + ChaChaPoly.path() + ", not the intrinsic engine");
        }
        new SecureRandom().nextBytes(key);
        plain = new byte[size];
        new SecureRandom().nextBytes(plain);
        out = new byte[size + 16];
        directIn = ByteBuffer.allocateDirect(size).put(plain).flip();
        directOut = ByteBuffer.allocateDirect(size + 16);
        heapIn = ByteBuffer.wrap(plain);
        heapOut = ByteBuffer.wrap(new byte[size + 16]);
        cipher = Cipher.getInstance("ChaCha20-Poly1305");
        sealed = new byte[size + 16];
        new ChaChaPoly().seal(key, 7, plain, 0, size, sealed, 0);
    }

    private IvParameterSpec nextNonce() {
        long c = ++counter;
        for (int i = 0; i < 8; i++) {
            nonce[4 + i] = (byte) (c >>> (8 * i));
        }
        return new IvParameterSpec(nonce);
    }

    /** The worst case: {@code Cipher.getInstance} per message. */
    @Benchmark
    public int jdkNewCipherSeal() throws GeneralSecurityException {
        Cipher c = Cipher.getInstance("ChaCha20-Poly1305");
        c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "ChaCha20"), nextNonce());
        return c.doFinal(plain, 0, size, out, 0);
    }

    /** The least the JDK's API allows: one Cipher per thread, an init (key and nonce specs) per message, arrays. */
    @Benchmark
    public int jdkSeal() throws GeneralSecurityException {
        cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "ChaCha20"), nextNonce());
        return cipher.doFinal(plain, 0, size, out, 0);
    }

    @Benchmark
    public int jdkSealHeapBuffer() throws GeneralSecurityException {
        cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "ChaCha20"), nextNonce());
        heapIn.clear();
        heapOut.clear();
        return cipher.doFinal(heapIn, heapOut);
    }

    @Benchmark
    public int jdkSealDirectBuffer() throws GeneralSecurityException {
        cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "ChaCha20"), nextNonce());
        directIn.clear();
        directOut.clear();
        return cipher.doFinal(directIn, directOut);
    }

    @Benchmark
    public int jdkOpen() throws GeneralSecurityException {
        for (int i = 0; i < 8; i++) {
            nonce[4 + i] = (byte) (7L >>> (8 * i));
        }
        cipher.init(Cipher.DECRYPT_MODE, new SecretKeySpec(key, "ChaCha20"), new IvParameterSpec(nonce));
        return cipher.doFinal(sealed, 0, size + 16, out, 0);
    }

    @Benchmark
    public int oursSeal() {
        return ours.seal(key, ++counter, plain, 0, size, out, 0);
    }

    @Benchmark
    public int oursOpen() {
        return ours.open(key, 7, sealed, 0, size + 16, out, 0);
    }

    /**
     * The data plane's per-datagram path through {@link Device} on one session: reserve (counter,
     * timers) then seal (header, padding, AEAD), and open a datagram by its receiver index. One
     * 1,420-byte inner packet: what each TSO segment costs.
     */
    @State(Scope.Thread)
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    @Warmup(iterations = 3, time = 1)
    @Measurement(iterations = 5, time = 1)
    @Fork(value = 1, jvmArgsAppend = {"--add-opens=java.base/com.sun.crypto.provider=ALL-UNNAMED", "--add-exports=java.base/sun.security.util.math=ALL-UNNAMED"})
    public static class DevicePath {
        private static final Endpoint EA = new Endpoint(0xc0000201, 51820);
        private static final Endpoint EB = new Endpoint(0xc0000202, 51820);
        private final ArrayDeque<Object[]> inFlight = new ArrayDeque<>();
        private Device a;
        private Device b;
        private Peer toB;
        private final byte[] packet = new byte[1420];
        private byte[] datagram;
        private byte[] sealedOut;
        private byte[] plainOut;
        private final Device.Reservation reservation = new Device.Reservation();
        private final Device.Opened opened = new Device.Opened();

        @Setup
        public void setUp() {
            SecureRandom random = new SecureRandom();
            byte[] aKey = X25519.generatePrivate(random);
            byte[] bKey = X25519.generatePrivate(random);
            a = device(aKey, EA, random);
            b = device(bKey, EB, random);
            a.setPeer(X25519.publicKey(bKey), null, EB, List.of(new AllowedIp(0x0af40200, 24)), 0);
            b.setPeer(X25519.publicKey(aKey), null, EA, List.of(new AllowedIp(0x0af40100, 24)), 0);
            packet[0] = 0x45;
            packet[2] = (byte) (packet.length >>> 8);
            packet[3] = (byte) packet.length;
            packet[9] = 6;
            packet[12] = 10; packet[13] = (byte) 244; packet[14] = 1; packet[15] = 5;
            packet[16] = 10; packet[17] = (byte) 244; packet[18] = 2; packet[19] = 5;
            a.sendPacket(packet, 0, packet.length); // staged behind the handshake
            for (int guard = 0; guard < 100 && !inFlight.isEmpty(); guard++) {
                Object[] g = inFlight.poll();
                Device to = g[0] == EA ? a : b;
                byte[] bytes = (byte[]) g[1];
                to.receive(bytes, 0, bytes.length, to == a ? EB : EA);
            }
            toB = a.peerForPacket(packet, 0, packet.length);
            sealedOut = new byte[a.sealedSize(packet.length)];
            datagram = new byte[a.sealedSize(packet.length)];
            plainOut = new byte[datagram.length];
            if (!a.reserve(toB, packet, 0, packet.length, reservation)) {
                throw new IllegalStateException("no session after the handshake");
            }
            a.sealReserved(reservation, packet, 0, packet.length, datagram, 0);
            if (!b.open(datagram, 0, datagram.length, plainOut, 0, opened)) {
                throw new IllegalStateException("the datagram does not open");
            }
        }

        private Device device(byte[] key, Endpoint at, SecureRandom random) {
            return new Device(new Device.Config(key, Timings.standard(), System::nanoTime, Instant::now, random, 1420,
                    () -> false, () -> { }), new Device.Wire() {
                        @Override
                        public void send(byte[] d, int off, int len, Endpoint to) {
                            inFlight.add(new Object[] {to, java.util.Arrays.copyOfRange(d, off, off + len)});
                        }

                        @Override
                        public void deliver(byte[] p, int off, int len) {
                        }
                    });
        }

        @Benchmark
        public int deviceSeal() {
            a.reserve(toB, packet, 0, packet.length, reservation);
            return a.sealReserved(reservation, packet, 0, packet.length, sealedOut, 0);
        }

        @Benchmark
        public boolean deviceOpen() {
            return b.open(datagram, 0, datagram.length, plainOut, 0, opened);
        }
    }
}
