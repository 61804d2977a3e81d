package org.jflannel.backend.wireguard.crypto;

import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chooses, once per process, which {@link AeadEngine} every {@link ChaChaPoly} uses, and logs it
 * with the reason. Where java.base's internals are reachable the candidates are the JDK's ChaCha20
 * block function with either the JDK's Poly1305 engine ({@link IntrinsicEngine}) or ours
 * ({@link Poly64Engine}), in the order {@link #prefer} gives for this CPU: the JDK's first where it
 * runs as its AVX-512 IFMA / AVX-IFMA intrinsic, ours first elsewhere (there the JDK's Poly1305 is
 * generic field code, ≈ 4× slower per message; docs/benchmarks.md). The first candidate that gives
 * the RFC 8439 §2.8.2 vector's bytes and the JDK cipher's bytes on a longer message is chosen; none:
 * {@link CipherEngine}.
 *
 * <p>The order is a deterministic check of the CPU's flags and {@code UseAVX} ({@link CpuFeatures}),
 * not a timed calibration: at start-up nothing is compiled by C2 yet, and the intrinsics exist only
 * in C2's code, so a short timing would measure the interpreter, and on a busy node it would differ
 * from one start to the next.
 *
 * <p>{@code JFLANNEL_WG_AEAD} (or {@code -Djflannel.wg.aead}): {@code auto} (the default),
 * {@code cipher} (the JDK cipher), {@code intrinsics} ({@link IntrinsicEngine}) or {@code poly64}
 * ({@link Poly64Engine}), the last two still self-tested; another value, or a forced engine that
 * cannot run or fails its self-test, is refused (no engine: the backend does not start, the message
 * names the variable).
 */
final class AeadPaths {
    static final String ENV = "JFLANNEL_WG_AEAD";
    static final String PROPERTY = "jflannel.wg.aead";
    static final String INTRINSICS = "jdk-intrinsics";
    static final String CIPHER = "jdk-cipher";
    private static final Logger LOG = LoggerFactory.getLogger(AeadPaths.class);
    private static final Choice CHOICE = choose(setting());

    record Choice(String name, Supplier<AeadEngine> engines, String reason) {
    }

    /** Engine names, best first, and why in that order. */
    record Preference(List<String> order, String reason) {
        Preference {
            order = List.copyOf(order);
        }
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
            case "cipher" -> c = new Choice(CIPHER, CipherEngine::new, ENV + "=cipher");
            case "auto" -> c = auto(detected());
            case "intrinsics", "poly64" -> c = forced(setting.equals("poly64") ? Poly64Engine.NAME : INTRINSICS);
            default -> c = refused(ENV + ": expected auto, cipher, intrinsics or poly64, got \"" + setting + "\"");
        }
        if (c.name().equals("none")) {
            LOG.error("wireguard aead setting refused {}={} reason=\"{}\"", ENV, setting, c.reason());
        } else {
            LOG.info("wireguard aead path={} runtime={} reason=\"{}\"", c.name(), Runtime.version(), c.reason());
        }
        return c;
    }

    /** Every ChaChaPoly refuses to exist, so the backend's start fails with this message. */
    private static Choice refused(String why) {
        return new Choice("none", () -> {
            throw new IllegalArgumentException(why);
        }, why);
    }

    private static Choice forced(String name) {
        if (JdkInternals.UNAVAILABLE != null) {
            return refused(ENV + " asks for " + name + ": jdk internals unavailable: " + JdkInternals.UNAVAILABLE);
        }
        String failed = tested(name);
        return failed != null ? refused(ENV + " asks for " + name + ": self-test failed: " + failed)
                : new Choice(name, supplier(name), ENV + " asks for it, self-test passed");
    }

    /** This host's features; unknown ones (the JDK's Poly1305 first, as before) if reading them fails in a way not foreseen. */
    private static CpuFeatures detected() {
        try {
            return CpuFeatures.detect();
        } catch (RuntimeException | LinkageError e) {
            return new CpuFeatures(java.util.Set.of(), -1, "not read: " + e);
        }
    }

    static Choice auto(CpuFeatures cpu) {
        if (JdkInternals.UNAVAILABLE != null) {
            return new Choice(CIPHER, CipherEngine::new, "jdk internals unavailable: " + JdkInternals.UNAVAILABLE);
        }
        Preference p = prefer(cpu);
        StringBuilder failures = new StringBuilder();
        for (String name : p.order()) {
            String failed = tested(name);
            if (failed == null) {
                return new Choice(name, supplier(name), p.reason() + ", self-test passed" + failures);
            }
            failures.append("; ").append(name).append(" failed the self-test: ").append(failed);
        }
        return new Choice(CIPHER, CipherEngine::new, p.reason() + failures);
    }

    /**
     * The order to try the engines in, from the CPU's features alone: the JDK's Poly1305 first where
     * it is the IFMA intrinsic, or where the features are unknown (what the JDK does is then its
     * business); ours first where it is not.
     */
    static Preference prefer(CpuFeatures cpu) {
        var ifma = cpu.poly1305Intrinsic();
        if (ifma.isEmpty()) {
            return new Preference(List.of(INTRINSICS, Poly64Engine.NAME), "cpu features unknown (" + cpu.describe() + "): the jdk's Poly1305");
        }
        if (ifma.get()) {
            return new Preference(List.of(INTRINSICS, Poly64Engine.NAME), cpu.describe() + ": the jdk's Poly1305 is its IFMA intrinsic");
        }
        return new Preference(List.of(Poly64Engine.NAME, INTRINSICS), cpu.describe() + ": no IFMA the JVM uses (avx512ifma+avx512vl at UseAVX=3, or avx_ifma), so no jdk Poly1305 intrinsic: radix-2^64 Poly1305");
    }

    private static Supplier<AeadEngine> supplier(String name) {
        return name.equals(Poly64Engine.NAME) ? Poly64Engine::new : IntrinsicEngine::new;
    }

    /** Null when the engine of that name passes {@link #selfTest}, else why not. */
    private static String tested(String name) {
        try {
            return selfTest(supplier(name).get(), new CipherEngine());
        } catch (RuntimeException | LinkageError e) {
            return e.toString();
        }
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
