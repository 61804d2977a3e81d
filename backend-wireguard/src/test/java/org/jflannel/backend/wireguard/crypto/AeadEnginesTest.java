package org.jflannel.backend.wireguard.crypto;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import javax.crypto.Cipher;
import javax.crypto.spec.ChaCha20ParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every engine behind {@link ChaChaPoly}: RFC 8439's vectors (§2.8.2 AEAD for all, §2.4.2 ChaCha20
 * and §2.5.2 Poly1305 for the parts we assemble: the JDK's ChaCha20 block function, the JDK's
 * Poly1305 engine and our radix-2^64 one), the fast engines byte for byte against the JDK cipher
 * on random inputs (lengths 0..3,000, random AAD, in place and not), and tags that fail.
 *
 * <p>The intrinsic engine needs JDK 21+ and the launchers' flags: the module's second test run
 * (Temurin 25 with the flags, {@code -Djflannel.test.aead=jdk-intrinsics}) requires it and fails
 * without it; the default run (the build's JDK 17, no flags) tests the fallback and skips the rest.
 */
class AeadEnginesTest {
    private static final HexFormat HEX = HexFormat.of();

    static boolean intrinsicsRequired() {
        return "jdk-intrinsics".equals(System.getProperty("jflannel.test.aead"));
    }

    static IntrinsicEngine intrinsic() {
        if (intrinsicsRequired()) {
            assertThat(JdkInternals.UNAVAILABLE).as("jdk internals on this runtime").isNull();
        }
        Assumptions.assumeTrue(JdkInternals.UNAVAILABLE == null, () -> "jdk internals unavailable here: " + JdkInternals.UNAVAILABLE);
        return new IntrinsicEngine();
    }

    static Stream<String> engines() {
        return Stream.of("jdk-cipher", "jdk-intrinsics", Poly64Engine.NAME);
    }

    /** The engines built on the JDK's internals: compared with the JDK cipher. */
    static Stream<String> fastEngines() {
        return Stream.of("jdk-intrinsics", Poly64Engine.NAME);
    }

    static AeadEngine engine(String name) {
        return switch (name) {
            case "jdk-cipher" -> new CipherEngine();
            case "jdk-intrinsics" -> intrinsic();
            default -> {
                intrinsic(); // the same internals (the JDK's ChaCha20 block function)
                yield new Poly64Engine();
            }
        };
    }

    @ParameterizedTest
    @MethodSource("engines")
    void rfc8439Section282Aead(String name) {
        AeadEngine e = engine(name);
        byte[] sealed = new byte[Rfc8439.PLAIN.length + 16];
        assertThat(e.seal(Rfc8439.KEY, Rfc8439.FIXED, Rfc8439.COUNTER, Rfc8439.PLAIN, 0, Rfc8439.PLAIN.length, Rfc8439.AAD, sealed, 0))
                .isEqualTo(sealed.length);
        assertThat(HEX.formatHex(sealed)).isEqualTo(Rfc8439.SEALED_HEX);
        byte[] opened = new byte[Rfc8439.PLAIN.length];
        assertThat(e.open(Rfc8439.KEY, Rfc8439.FIXED, Rfc8439.COUNTER, sealed, 0, sealed.length, Rfc8439.AAD, opened, 0)).isEqualTo(opened.length);
        assertThat(opened).isEqualTo(Rfc8439.PLAIN);
    }

    @ParameterizedTest
    @MethodSource("engines")
    void aFlippedBitInCiphertextTagOrAadOrAnotherNonceFails(String name) {
        AeadEngine e = engine(name);
        byte[] aad = "aad".getBytes(StandardCharsets.US_ASCII);
        byte[] plain = CryptoVectorsTest.msg(1420);
        byte[] sealed = new byte[1420 + 16];
        e.seal(Rfc8439.KEY, 0, 42, plain, 0, plain.length, aad, sealed, 0);
        byte[] out = new byte[1420];
        for (int at : new int[] {0, 700, 1419, 1420, 1435}) {
            byte[] bad = sealed.clone();
            bad[at] ^= 0x10;
            assertThat(e.open(Rfc8439.KEY, 0, 42, bad, 0, bad.length, aad, out, 0)).as("bit flipped at %d", at).isEqualTo(-1);
        }
        assertThat(e.open(Rfc8439.KEY, 0, 42, sealed, 0, sealed.length, "aae".getBytes(StandardCharsets.US_ASCII), out, 0)).isEqualTo(-1);
        assertThat(e.open(Rfc8439.KEY, 0, 43, sealed, 0, sealed.length, aad, out, 0)).isEqualTo(-1);
        assertThat(e.open(Rfc8439.KEY, 0, 42, sealed, 0, 15, aad, out, 0)).isEqualTo(-1);
        assertThat(e.open(Rfc8439.KEY, 0, 42, sealed, 0, sealed.length, aad, out, 0)).isEqualTo(1420);
        assertThat(out).isEqualTo(plain);
    }

    @Test
    void rfc8439Section242ChaCha20() {
        String plain = "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
        String expected = "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0bf91b65c5524733ab8f593dabcd62b357"
                + "1639d624e65152ab8f530c359f0861d807ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab77937365af90bbf74a35be6b40b8eedf2785e42874d";
        byte[] in = plain.getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[in.length];
        // nonce 000000000000004a00000000: first word 0, then bytes 00 00 00 4a 00 00 00 00 little endian
        intrinsic().chacha20(CryptoVectorsTest.range(0, 32), 0, 0x4a000000L, 1, in, 0, in.length, out, 0);
        assertThat(HEX.formatHex(out)).isEqualTo(expected);
    }

    @Test
    void rfc8439Section242AgreesWithTheJdksChaCha20() throws Exception {
        // the vector as the JDK's plain ChaCha20 computes it: a check on the vector's transcription
        Cipher c = Cipher.getInstance("ChaCha20");
        c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(CryptoVectorsTest.range(0, 32), "ChaCha20"),
                new ChaCha20ParameterSpec(HEX.parseHex("000000000000004a00000000"), 1));
        byte[] in = "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it."
                .getBytes(StandardCharsets.US_ASCII);
        assertThat(HEX.formatHex(c.doFinal(in))).startsWith("6e2e359a2568f98041ba0728dd0d6981").endsWith("5af90bbf74a35be6b40b8eedf2785e42874d");
    }

    @Test
    void rfc8439Section252Poly1305() {
        byte[] key = HEX.parseHex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b");
        byte[] msg = "Cryptographic Forum Research Group".getBytes(StandardCharsets.US_ASCII);
        IntrinsicEngine e = intrinsic();
        assertThat(HEX.formatHex(e.poly1305(key, msg))).isEqualTo("a8061dc1305136c6c22b8baf0c0127a9");
        // the same engine again: its state is reset per message
        assertThat(HEX.formatHex(e.poly1305(key, msg))).isEqualTo("a8061dc1305136c6c22b8baf0c0127a9");
    }

    @Test
    void rfc8439Section252Poly1305Radix64() {
        byte[] key = HEX.parseHex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b");
        byte[] msg = "Cryptographic Forum Research Group".getBytes(StandardCharsets.US_ASCII);
        Poly1305x64 p = new Poly1305x64();
        byte[] tag = new byte[16];
        for (int round = 0; round < 2; round++) { // the same instance again: its state is reset per key
            p.key(key, 0);
            p.blocks(msg, 0, 32);
            p.lastPartialBlock(msg, 32, 2);
            p.tag(tag, 0);
            assertThat(HEX.formatHex(tag)).isEqualTo("a8061dc1305136c6c22b8baf0c0127a9");
        }
    }

    /** Accumulators at and near p and 2^130 (all-ones blocks, r's largest clamped value), where the final reduction and the carries matter. */
    @Test
    void poly1305Radix64AgreesWithTheJdksEngineAtTheFieldsEdges() {
        IntrinsicEngine jdk = intrinsic();
        Poly1305x64 ours = new Poly1305x64();
        SplittableRandom random = new SplittableRandom(1305);
        byte[] tag = new byte[16];
        for (int i = 0; i < 2000; i++) {
            byte[] key = bytes(random, 32);
            if (i % 2 == 0) {
                Arrays.fill(key, 0, 16, (byte) 0xff); // r clamped to its largest value
            }
            byte[] msg = new byte[16 * (1 + random.nextInt(40))];
            int kind = i % 4;
            if (kind < 2) {
                Arrays.fill(msg, (byte) 0xff);
            } else if (kind == 2) {
                random.nextBytes(msg);
            } else {
                Arrays.fill(key, 16, 32, (byte) 0xff); // s near 2^128: the final carry wraps
                random.nextBytes(msg);
            }
            ours.key(key, 0);
            ours.blocks(msg, 0, msg.length);
            ours.tag(tag, 0);
            assertThat(HEX.formatHex(tag)).as("key %s, %d bytes", HEX.formatHex(key), msg.length).isEqualTo(HEX.formatHex(jdk.poly1305(key, msg)));
        }
    }

    @ParameterizedTest
    @MethodSource("fastEngines")
    void equalsTheJdkCipherOnRandomInputsOfEveryLengthTo3000(String name) {
        AeadEngine fast = engine(name);
        CipherEngine jdk = new CipherEngine();
        SplittableRandom random = new SplittableRandom(8439);
        for (int len = 0; len <= 3000; len++) {
            check(fast, jdk, random, len);
        }
    }

    @ParameterizedTest
    @MethodSource("fastEngines")
    void equalsTheJdkCipherOn64KiB(String name) {
        AeadEngine fast = engine(name);
        CipherEngine jdk = new CipherEngine();
        SplittableRandom random = new SplittableRandom(65536);
        for (int len : new int[] {65535, 65536, 65536 + 17}) {
            check(fast, jdk, random, len);
        }
    }

    /**
     * Many data-plane-sized messages, each compared with the JDK cipher: enough calls for the JIT
     * to compile the engine (C2 then swaps in the intrinsics, whose limbs and keystream layout
     * differ from the Java code's), so the compiled path is compared too, not only the interpreted.
     */
    @ParameterizedTest
    @MethodSource("fastEngines")
    void equalsTheJdkCipherOnceCompiled(String name) {
        AeadEngine fast = engine(name);
        CipherEngine jdk = new CipherEngine();
        SplittableRandom random = new SplittableRandom(22);
        byte[] key = bytes(random, 32);
        byte[] plain = bytes(random, 1420);
        byte[] a = new byte[1436];
        byte[] b = new byte[1436];
        for (int i = 0; i < 20_000; i++) {
            plain[i % 1420] ^= (byte) i;
            fast.seal(key, 0, i, plain, 0, 1420, null, a, 0);
            jdk.seal(key, 0, i, plain, 0, 1420, null, b, 0);
            if (!Arrays.equals(a, b)) {
                assertThat(a).as("message %d", i).isEqualTo(b);
            }
            if (fast.open(key, 0, i, b, 0, 1436, null, a, 0) != 1420) {
                assertThat(i).as("message %d does not open", i).isNegative();
            }
        }
    }

    /** One random message: out of place and in place (after a header, as the data plane), with and without AAD, opened by the other engine. */
    private static void check(AeadEngine fast, AeadEngine jdk, SplittableRandom random, int len) {
        byte[] key = bytes(random, 32);
        long counter = random.nextLong();
        byte[] plain = bytes(random, len);
        byte[] aad = random.nextBoolean() ? null : bytes(random, random.nextInt(70));
        byte[] badTag = null;
        int fixed = random.nextBoolean() ? 0 : random.nextInt();
        byte[] expected = new byte[len + 16];
        assertThat(jdk.seal(key, fixed, counter, plain, 0, len, aad, expected, 0)).isEqualTo(len + 16);

        byte[] out = new byte[3 + len + 16];
        assertThat(fast.seal(key, fixed, counter, plain, 0, len, aad, out, 3)).isEqualTo(len + 16);
        assertThat(Arrays.copyOfRange(out, 3, out.length)).as("sealed, length %d", len).isEqualTo(expected);

        byte[] buf = new byte[16 + len + 16];
        System.arraycopy(plain, 0, buf, 16, len);
        fast.seal(key, fixed, counter, buf, 16, len, aad, buf, 16);
        assertThat(Arrays.copyOfRange(buf, 16, buf.length)).as("sealed in place, length %d", len).isEqualTo(expected);
        assertThat(fast.open(key, fixed, counter, buf, 16, len + 16, aad, buf, 16)).isEqualTo(len);
        assertThat(Arrays.copyOfRange(buf, 16, 16 + len)).as("opened in place, length %d", len).isEqualTo(plain);

        byte[] opened = new byte[len];
        assertThat(fast.open(key, fixed, counter, expected, 0, len + 16, aad, opened, 0)).isEqualTo(len);
        assertThat(opened).isEqualTo(plain);
        badTag = expected.clone();
        badTag[random.nextInt(len + 16)] ^= (byte) (1 << random.nextInt(8));
        assertThat(fast.open(key, fixed, counter, badTag, 0, len + 16, aad, opened, 0)).as("tampered, length %d", len).isEqualTo(-1);
        byte[] back = new byte[len];
        assertThat(jdk.open(key, fixed, counter, Arrays.copyOfRange(out, 3, out.length), 0, len + 16, aad, back, 0)).isEqualTo(len);
        assertThat(back).isEqualTo(plain);
    }

    private static byte[] bytes(SplittableRandom random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    @Test
    void theSelfTestRejectsAnEngineThatDiffers() {
        AeadEngine broken = new AeadEngine() {
            private final CipherEngine inner = new CipherEngine();

            @Override
            public int seal(byte[] key, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
                int n = inner.seal(key, fixed, counter, in, off, len, aad, out, outOff);
                if (len > 1000) {
                    out[outOff + 2000] ^= 1; // right on the vector, wrong further on
                }
                return n;
            }

            @Override
            public int open(byte[] key, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
                return inner.open(key, fixed, counter, in, off, len, aad, out, outOff);
            }

            @Override
            public String name() {
                return "broken";
            }
        };
        assertThat(AeadPaths.selfTest(broken, new CipherEngine())).contains("2,500 bytes");
        assertThat(AeadPaths.selfTest(new CipherEngine(), new CipherEngine())).isNull();
    }

    /** The whole automatic choice, self-tests included, for a CPU with IFMA and one without (whatever this host has). */
    @Test
    void autoChoosesTheJdksPoly1305WithIfmaAndOursWithout() {
        intrinsic();
        AeadPaths.Choice ifma = AeadPaths.auto(new CpuFeatures(java.util.Set.of("avx2", "avx512f", "avx512vl", "avx512ifma"), 3, "test"));
        assertThat(ifma.name()).as(ifma.reason()).isEqualTo("jdk-intrinsics");
        assertThat(ifma.engines().get()).isInstanceOf(IntrinsicEngine.class);
        AeadPaths.Choice avx2 = AeadPaths.auto(new CpuFeatures(java.util.Set.of("avx2", "bmi2", "adx"), -1, "test"));
        assertThat(avx2.name()).as(avx2.reason()).isEqualTo(Poly64Engine.NAME);
        assertThat(avx2.engines().get()).isInstanceOf(Poly64Engine.class);
        assertThat(avx2.reason()).contains("no IFMA").contains("self-test passed");
    }

    @Test
    void thePathIsTheOneThisCpuPrefersWhereInternalsAreRequiredElseTheCipher() {
        AeadPaths.Choice c = AeadPaths.choice();
        if (intrinsicsRequired()) {
            String preferred = AeadPaths.prefer(CpuFeatures.detect()).order().get(0);
            assertThat(c.name()).as(c.reason()).isEqualTo(preferred);
            assertThat(c.reason()).contains("UseAVX=").contains("self-test passed");
            assertThat(AeadPaths.choose("intrinsics").engines().get()).isInstanceOf(IntrinsicEngine.class);
            assertThat(AeadPaths.choose("poly64").engines().get()).isInstanceOf(Poly64Engine.class);
        } else if (JdkInternals.UNAVAILABLE != null) {
            assertThat(c.name()).isEqualTo("jdk-cipher");
            assertThat(c.reason()).contains("unavailable");
            AeadPaths.Choice forced = AeadPaths.choose("poly64");
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> forced.engines().get())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("JFLANNEL_WG_AEAD").hasMessageContaining("unavailable");
        }
        assertThat(AeadPaths.choose("cipher").name()).isEqualTo("jdk-cipher");
        assertThat(AeadPaths.choose("cipher").engines().get()).isInstanceOf(CipherEngine.class);
        AeadPaths.Choice bad = AeadPaths.choose("fast");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> bad.engines().get())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("JFLANNEL_WG_AEAD").hasMessageContaining("fast");
        assertThat(ChaChaPoly.path()).isEqualTo(c.name());
    }
}
