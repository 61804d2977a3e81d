package org.jflannel.backend.wireguard.protocol;

import static org.jflannel.backend.wireguard.protocol.Messages.*;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Optional;
import org.jflannel.backend.wireguard.crypto.Blake2s;
import org.jflannel.backend.wireguard.crypto.XChaChaPoly;

/**
 * mac1, mac2 and cookie replies (whitepaper §5.4.4, §5.4.7). mac1 (keyed with the receiver's
 * public key) proves the sender knows whom it talks to and is checked before any Curve25519 work;
 * under load the responder also wants mac2, keyed with a cookie it gave the sender's address in a
 * cookie reply, so a flood from spoofed addresses costs it one BLAKE2s per packet. Two halves:
 * {@link Checker} is ours as a receiver (one per device), {@link Generator} ours as a sender (one per
 * peer). Both are guarded by their owner.
 */
public final class Cookies {
    static final byte[] LABEL_MAC1 = "mac1----".getBytes(StandardCharsets.US_ASCII);
    static final byte[] LABEL_COOKIE = "cookie--".getBytes(StandardCharsets.US_ASCII);

    private Cookies() {
    }

    /** Where mac1 starts in a handshake message of {@code len} bytes (mac2 is 16 bytes after). */
    static int mac1At(int len) {
        return len - 32;
    }

    /** The receiving side: verifies mac1/mac2 of handshake messages sent to us, makes cookie replies. */
    public static final class Checker {
        private final byte[] mac1Key;
        private final byte[] cookieKey;
        private final long secretLifetimeNanos;
        private final SecureRandom random;
        private final XChaChaPoly xaead = new XChaChaPoly();
        private final byte[] secret = new byte[32];
        private long secretBornNanos = Long.MIN_VALUE;

        public Checker(byte[] localPublic, long secretLifetimeNanos, SecureRandom random) {
            this.mac1Key = Blake2s.hash(LABEL_MAC1, localPublic);
            this.cookieKey = Blake2s.hash(LABEL_COOKIE, localPublic);
            this.secretLifetimeNanos = secretLifetimeNanos;
            this.random = random;
        }

        public synchronized boolean mac1Valid(byte[] msg, int off, int len) {
            int at = mac1At(len);
            byte[] mac = Blake2s.mac(mac1Key, msg, off, at);
            return Noise.equal(mac, slice(msg, off + at, 16));
        }

        /** mac2 equals MAC(cookie of {@code source}, message up to mac2). */
        public synchronized boolean mac2Valid(byte[] msg, int off, int len, byte[] source, long nowNanos) {
            byte[] cookie = cookie(source, nowNanos);
            byte[] mac = Blake2s.mac(cookie, msg, off, len - 16);
            return Noise.equal(mac, slice(msg, off + len - 16, 16));
        }

        /** A cookie reply to the handshake message {@code msg} from {@code source}: 64 bytes. */
        public synchronized byte[] reply(byte[] msg, int off, int len, byte[] source, long nowNanos) {
            int sender = u32(msg, off + 4); // initiation and response both carry the sender index at 4
            byte[] cookie = cookie(source, nowNanos);
            byte[] nonce = new byte[24];
            random.nextBytes(nonce);
            byte[] sealed = xaead.seal(cookieKey, nonce, cookie, slice(msg, off + mac1At(len), 16));
            byte[] out = new byte[COOKIE_REPLY_SIZE];
            u32(out, 0, COOKIE_REPLY);
            u32(out, COOKIE_RECEIVER, sender);
            System.arraycopy(nonce, 0, out, COOKIE_NONCE, 24);
            System.arraycopy(sealed, 0, out, COOKIE_SEALED, 32);
            return out;
        }

        /** MAC(secret, source address ‖ port), the secret renewed every two minutes. */
        private byte[] cookie(byte[] source, long nowNanos) {
            if (secretBornNanos == Long.MIN_VALUE || nowNanos - secretBornNanos >= secretLifetimeNanos) {
                random.nextBytes(secret);
                secretBornNanos = nowNanos;
            }
            return Blake2s.mac(secret, source, 0, source.length);
        }
    }

    /** The sending side, per peer: adds mac1 and (with a fresh cookie) mac2; takes the peer's cookie replies. */
    public static final class Generator {
        private final byte[] mac1Key;
        private final byte[] cookieKey;
        private final long cookieLifetimeNanos;
        private final XChaChaPoly xaead = new XChaChaPoly();
        private byte[] lastMac1;
        private byte[] cookie;
        private long cookieBornNanos;

        public Generator(byte[] remotePublic, long cookieLifetimeNanos) {
            this.mac1Key = Blake2s.hash(LABEL_MAC1, remotePublic);
            this.cookieKey = Blake2s.hash(LABEL_COOKIE, remotePublic);
            this.cookieLifetimeNanos = cookieLifetimeNanos;
        }

        /** Fills mac1 and mac2 of the handshake message {@code msg[off, off + len)}. */
        public synchronized void addMacs(byte[] msg, int off, int len, long nowNanos) {
            int at = mac1At(len);
            byte[] mac1 = Blake2s.mac(mac1Key, msg, off, at);
            System.arraycopy(mac1, 0, msg, off + at, 16);
            lastMac1 = mac1;
            byte[] mac2 = cookie != null && nowNanos - cookieBornNanos < cookieLifetimeNanos
                    ? Blake2s.mac(cookie, msg, off, len - 16) : new byte[16];
            System.arraycopy(mac2, 0, msg, off + len - 16, 16);
        }

        /** Takes a cookie reply: true when it decrypts against the mac1 we last sent. */
        public synchronized boolean consumeReply(byte[] msg, int off, long nowNanos) {
            if (lastMac1 == null) {
                return false;
            }
            Optional<byte[]> c = xaead.open(cookieKey, slice(msg, off + COOKIE_NONCE, 24), slice(msg, off + COOKIE_SEALED, 32), lastMac1);
            if (c.isEmpty()) {
                return false;
            }
            cookie = c.get();
            cookieBornNanos = nowNanos;
            return true;
        }

        synchronized boolean hasCookie(long nowNanos) {
            return cookie != null && nowNanos - cookieBornNanos < cookieLifetimeNanos;
        }
    }
}
