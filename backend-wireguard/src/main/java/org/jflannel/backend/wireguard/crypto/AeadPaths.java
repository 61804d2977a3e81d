package org.jflannel.backend.wireguard.crypto;

import java.util.HexFormat;
import java.util.Locale;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chooses, once per process, which {@link AeadEngine} every {@link ChaChaPoly} uses, and logs it:
 * {@link IntrinsicEngine} where java.base's internals are reachable and give the RFC 8439 §2.8.2
 * vector's bytes and the JDK cipher's bytes on a longer message, else {@link CipherEngine}.
 * {@code JFLANNEL_WG_AEAD=cipher} (or {@code -Djflannel.wg.aead=cipher}) forces the JDK cipher,
 * for comparison; another value than {@code auto} or {@code cipher} is refused (no engine: the
 * backend does not start, the message names the variable).
 */
final class AeadPaths {
    static final String ENV = "JFLANNEL_WG_AEAD";
    static final String PROPERTY = "jflannel.wg.aead";
    private static final Logger LOG = LoggerFactory.getLogger(AeadPaths.class);
    private static final Choice CHOICE = choose(setting());

    record Choice(String name, Supplier<AeadEngine> engines, String reason) {
    }

    private AeadPaths() {
    }

    static AeadEngine newEngine() {
        return CHOICE.engines().get();
    }

    static Choice choice() {
        return CHOICE;
    }

    private static String setting() {
        String v = System.getProperty(PROPERTY);
        if (v == null) {
            v = System.getenv(ENV);
        }
        return v == null || v.isBlank() ? "auto" : v.trim().toLowerCase(Locale.ROOT);
    }

    static Choice choose(String setting) {
        Choice c;
        switch (setting) {
            case "cipher" -> c = new Choice("jdk-cipher", CipherEngine::new, ENV + "=cipher");
            case "auto" -> c = auto();
            default -> {
                // every ChaChaPoly refuses to exist, so the backend's start fails with this message
                String refused = ENV + ": expected auto or cipher, got \"" + setting + "\"";
                LOG.error("wireguard aead setting refused {}={} expected=auto|cipher", ENV, setting);
                return new Choice("none", () -> {
                    throw new IllegalArgumentException(refused);
                }, refused);
            }
        }
        LOG.info("wireguard aead path={} runtime={} reason=\"{}\"", c.name(), Runtime.version(), c.reason());
        return c;
    }

    private static Choice auto() {
        if (JdkInternals.UNAVAILABLE != null) {
            return new Choice("jdk-cipher", CipherEngine::new, "jdk internals unavailable: " + JdkInternals.UNAVAILABLE);
        }
        String failed;
        try {
            failed = selfTest(new IntrinsicEngine(), new CipherEngine());
        } catch (RuntimeException | LinkageError e) {
            failed = e.toString();
        }
        if (failed != null) {
            return new Choice("jdk-cipher", CipherEngine::new, "jdk internals failed the self-test: " + failed);
        }
        return new Choice("jdk-intrinsics", IntrinsicEngine::new, "ChaCha20Cipher.implChaCha20Block and Poly1305 reachable, self-test passed");
    }

    /** Null when {@code fast} gives RFC 8439 §2.8.2's bytes and {@code reference}'s on a message spanning several keystream calls, else what differed. */
    static String selfTest(AeadEngine fast, AeadEngine reference) {
        HexFormat hex = HexFormat.of();
        byte[] sealed = new byte[Rfc8439.PLAIN.length + 16];
        fast.seal(Rfc8439.KEY, Rfc8439.FIXED, Rfc8439.COUNTER, Rfc8439.PLAIN, 0, Rfc8439.PLAIN.length, Rfc8439.AAD, sealed, 0);
        if (!hex.formatHex(sealed).equals(Rfc8439.SEALED_HEX)) {
            return "rfc8439 2.8.2 seal";
        }
        byte[] opened = new byte[Rfc8439.PLAIN.length];
        if (fast.open(Rfc8439.KEY, Rfc8439.FIXED, Rfc8439.COUNTER, sealed, 0, sealed.length, Rfc8439.AAD, opened, 0) != opened.length
                || !java.util.Arrays.equals(opened, Rfc8439.PLAIN)) {
            return "rfc8439 2.8.2 open";
        }
        byte[] msg = new byte[2500];
        for (int i = 0; i < msg.length; i++) {
            msg[i] = (byte) (i * 31 + 5);
        }
        byte[] a = new byte[msg.length + 16];
        byte[] b = new byte[msg.length + 16];
        fast.seal(Rfc8439.KEY, 0, 0x0123456789abcdefL, msg, 0, msg.length, null, a, 0);
        reference.seal(Rfc8439.KEY, 0, 0x0123456789abcdefL, msg, 0, msg.length, null, b, 0);
        if (!java.util.Arrays.equals(a, b)) {
            return "2,500 bytes differ from the jdk cipher's";
        }
        return null;
    }
}
