package org.jflannel.backend.wireguard.crypto;

import static org.assertj.core.api.Assertions.assertThat;

import java.security.SecureRandom;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Known-answer tests. RFC 7693 Appendix B (BLAKE2s-256("abc")), RFC 7748 §6.1 (X25519), the
 * XChaCha draft §2.2.1 (HChaCha20); the others were computed with CPython's hashlib.blake2s and
 * hmac (an independent BLAKE2s, the reference C code) and pyca/cryptography's ChaCha20-Poly1305.
 */
class CryptoVectorsTest {
    private static final HexFormat HEX = HexFormat.of();

    /** 0, 7, 20, 33, … : the same pattern the Python side used. */
    static byte[] msg(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 13 + 7);
        }
        return b;
    }

    static byte[] range(int from, int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (from + i);
        }
        return b;
    }

    @Test
    void blake2sRfc7693AppendixB() {
        assertThat(HEX.formatHex(Blake2s.hash("abc".getBytes(java.nio.charset.StandardCharsets.US_ASCII))))
                .isEqualTo("508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982");
    }

    @ParameterizedTest
    @CsvSource({
        "0, 69217a3079908094e11121d042354a7c1f55b6482ca1a51e1b250dfd1ed0eef9",
        "1, 6b821f55cab354e67d82cd1ae7c29b69dbdfc28072eb2e0e375e9ad798fedc70",
        "63, 417d235dfc75e4f7b6b4d8c0099e841d0830796b67fe528b817b650c393bf089",
        "64, d60c186279cf68a06f105ff506cff0e39527f38c4b7eefa8e978187c1527e3dd",
        "65, 67f8f731d2436fe7879c2450e0fe1a163277be885a9868d1a02c1e4d9baa5e79",
        "200, ceaf253e68ea544e8b00c7525e51f7e078919fc5bf21a127ba58dc50a773af93"})
    void blake2s256(int n, String hex) {
        assertThat(HEX.formatHex(Blake2s.hash(msg(n)))).isEqualTo(hex);
        // fed in uneven pieces: the block boundary logic must not depend on how input arrives
        Blake2s b = new Blake2s(32);
        byte[] m = msg(n);
        for (int i = 0; i < n; i += 7) {
            b.update(m, i, Math.min(7, n - i));
        }
        assertThat(HEX.formatHex(b.digest())).isEqualTo(hex);
    }

    @ParameterizedTest
    @CsvSource({"0, 9536f9b267655743dee97b8a670f9f53", "64, 0891bde862eea58b03faf47d1c19006b", "65, ab278011e9e0959d6a74bc9ad366e6a2"})
    void keyedBlake2s128IsWireguardsMac(int n, String hex) {
        assertThat(HEX.formatHex(Blake2s.mac(range(0, 32), msg(n), 0, n))).isEqualTo(hex);
    }

    @ParameterizedTest
    @CsvSource({
        "0, 415e9b4d3980426d4035d9a83fea764b343f7268672ebf9a667a6c308967024a",
        "100, 7db849f190a2c53e1f67aa8f2259a21d5f561936a218f1f71b4d17dc21b4b638"})
    void hmacBlake2s(int n, String hex) {
        assertThat(HEX.formatHex(Kdf.hmac(range(1, 32), msg(n)))).isEqualTo(hex);
    }

    @Test
    void kdfChainsHmacs() {
        byte[] key = range(1, 32);
        byte[] input = msg(40);
        byte[][] out = Kdf.kdf(3, key, input);
        byte[] prk = Kdf.hmac(key, input);
        byte[] t1 = Kdf.hmac(prk, new byte[] {1});
        byte[] t2 = Kdf.hmac(prk, t1, new byte[] {2});
        byte[] t3 = Kdf.hmac(prk, t2, new byte[] {3});
        assertThat(out).isDeepEqualTo(new byte[][] {t1, t2, t3});
        assertThat(Kdf.kdf(1, key, input)[0]).isEqualTo(t1);
    }

    @Test
    void x25519Rfc7748() {
        byte[] alice = HEX.parseHex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
        byte[] bob = HEX.parseHex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
        assertThat(HEX.formatHex(X25519.publicKey(alice))).isEqualTo("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
        assertThat(HEX.formatHex(X25519.publicKey(bob))).isEqualTo("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
        assertThat(HEX.formatHex(X25519.dh(alice, X25519.publicKey(bob)).orElseThrow()))
                .isEqualTo("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
    }

    @Test
    void x25519RefusesASmallOrderPoint() {
        byte[] priv = X25519.generatePrivate(new SecureRandom());
        assertThat(X25519.dh(priv, new byte[32])).isEmpty();
    }

    @Test
    void hchacha20DraftVector() {
        assertThat(HEX.formatHex(XChaChaPoly.hchacha20(range(0, 32), HEX.parseHex("000000090000004a0000000031415927"))))
                .isEqualTo("82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc");
    }

    @Test
    void xchachaSealsAsPycaWithHchachaSubkey() {
        byte[] sealed = new XChaChaPoly().seal(range(0, 32), range(0, 24), "cookie-cookie-16".getBytes(java.nio.charset.StandardCharsets.US_ASCII),
                "aad".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        assertThat(HEX.formatHex(sealed)).isEqualTo("fdad6014f9b7a0cd5c2b4da7ae7f99de7b40d1ae2a7e118d543fbf76515004bb");
        assertThat(new XChaChaPoly().open(range(0, 32), range(0, 24), sealed, "aad".getBytes(java.nio.charset.StandardCharsets.US_ASCII)))
                .hasValueSatisfying(p -> assertThat(new String(p, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("cookie-cookie-16"));
        sealed[3] ^= 1;
        assertThat(new XChaChaPoly().open(range(0, 32), range(0, 24), sealed, "aad".getBytes(java.nio.charset.StandardCharsets.US_ASCII))).isEmpty();
    }

    @Test
    void chachaPolyNonceIsCounterLittleEndianAfterFourZeros() {
        // pyca: ChaCha20Poly1305(key).encrypt(bytes(4) + (5).to_bytes(8, 'little'), b'', b'') is the tag alone
        ChaChaPoly aead = new ChaChaPoly();
        byte[] key = range(0, 32);
        byte[] a = aead.seal(key, 5, new byte[0], new byte[0]);
        assertThat(HEX.formatHex(a)).isEqualTo("3e2fdcfe114117a96d0d40c0777d9d17");
        assertThat(aead.open(key, 5, a, new byte[0])).isPresent();
        assertThat(aead.open(key, 6, a, new byte[0])).isEmpty();
    }
}
