package org.jflannel.backend.wireguard.crypto;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.spec.NamedParameterSpec;
import java.security.spec.XECPrivateKeySpec;
import java.security.spec.XECPublicKeySpec;
import java.util.Optional;
import javax.crypto.KeyAgreement;

/**
 * Curve25519 Diffie-Hellman (RFC 7748) on raw 32-byte keys, as WireGuard exchanges them, through
 * the JDK's XDH provider. A shared secret of all zeros (a small-order public key) is refused by the
 * JDK, and so by WireGuard: {@link #dh} returns empty and the handshake is dropped.
 */
public final class X25519 {
    private static final byte[] BASE_POINT = new byte[32];
    static {
        BASE_POINT[0] = 9;
    }

    private X25519() {
    }

    /** A fresh private key, clamped as {@code wg genkey} writes it. */
    public static byte[] generatePrivate(SecureRandom random) {
        byte[] k = new byte[32];
        random.nextBytes(k);
        clamp(k);
        return k;
    }

    public static void clamp(byte[] k) {
        k[0] &= (byte) 248;
        k[31] &= 127;
        k[31] |= 64;
    }

    public static byte[] publicKey(byte[] privateKey) {
        return dh(privateKey, BASE_POINT).orElseThrow(() -> new IllegalArgumentException("x25519: invalid private key"));
    }

    /** X25519(privateKey, publicKey); empty when the result is all zeros (small-order point). */
    public static Optional<byte[]> dh(byte[] privateKey, byte[] publicKey) {
        if (privateKey.length != 32 || publicKey.length != 32) {
            throw new IllegalArgumentException("x25519: keys are 32 bytes, got " + privateKey.length + " and " + publicKey.length);
        }
        try {
            KeyFactory kf = KeyFactory.getInstance("XDH");
            PrivateKey priv = kf.generatePrivate(new XECPrivateKeySpec(NamedParameterSpec.X25519, privateKey.clone()));
            byte[] u = new byte[32];
            for (int i = 0; i < 32; i++) {
                u[i] = publicKey[31 - i]; // little-endian on the wire, BigInteger wants big-endian
            }
            u[0] &= 127; // RFC 7748: the top bit of the u-coordinate is ignored
            PublicKey pub = kf.generatePublic(new XECPublicKeySpec(NamedParameterSpec.X25519, new BigInteger(1, u)));
            KeyAgreement ka = KeyAgreement.getInstance("XDH");
            ka.init(priv);
            ka.doPhase(pub, true);
            return Optional.of(ka.generateSecret());
        } catch (java.security.InvalidKeyException e) {
            return Optional.empty(); // "Point has small order": an all-zero secret
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("x25519 unavailable in this JDK", e);
        }
    }
}
