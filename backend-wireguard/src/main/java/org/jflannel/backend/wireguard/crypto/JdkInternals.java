package org.jflannel.backend.wireguard.crypto;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.security.Key;
import java.security.spec.AlgorithmParameterSpec;

/**
 * Handles on two of java.base's internals that the JDK's JIT (C2) replaces with vector code: the
 * ChaCha20 block function {@code com.sun.crypto.provider.ChaCha20Cipher.implChaCha20Block(int[], byte[])}
 * (AVX-512: 16 blocks a call; AVX2: 8; elsewhere the Java code, 1 block) and the Poly1305 engine
 * {@code com.sun.crypto.provider.Poly1305}, whose bulk loop ({@code processMultipleBlocks}) is the
 * AVX-512 IFMA / AVX2 intrinsic. They are reached through {@code static final} handles so that C2
 * inlines the calls and applies the intrinsics as it does inside the JDK's own cipher.
 *
 * <p>Needs {@code --add-opens java.base/com.sun.crypto.provider=ALL-UNNAMED} (the two classes'
 * private members), {@code --add-exports java.base/sun.security.util.math=ALL-UNNAMED} (the field
 * elements' limbs, which {@link IntrinsicEngine} sets itself instead of making new elements per
 * message) and the JDK 21+ method names (Temurin 25 has them); otherwise {@link #UNAVAILABLE} says why and every handle is
 * null. Nothing here is used then: {@link ChaChaPoly} falls back to the public {@code Cipher}.
 */
final class JdkInternals {
    private static final String PACKAGE = "com.sun.crypto.provider";
    /** {@code int implChaCha20Block(int[16] state, byte[1024] keystream)}: bytes of keystream written, a multiple of 64. */
    static final MethodHandle CHACHA_BLOCK;
    /** {@code Object new Poly1305(boolean checkWeakKey)}. */
    static final MethodHandle POLY_NEW;
    /** {@code void engineInit(Object poly, Key key, AlgorithmParameterSpec null)}: clamps the key's encoded bytes in place. */
    static final MethodHandle POLY_INIT;
    /** {@code void engineUpdate(Object poly, byte[] in, int off, int len)}. */
    static final MethodHandle POLY_UPDATE;
    /** {@code byte[] engineDoFinal(Object poly)}: the 16-byte tag, and the engine reset. */
    static final MethodHandle POLY_FINAL;
    /** {@code Object poly.a}: the accumulator, a field element (kept until the next init or final). */
    static final MethodHandle POLY_ACCUMULATOR;
    /** {@code Object poly.r}: the multiplier, a field element (made by init). */
    static final MethodHandle POLY_MULTIPLIER;
    /** {@code long[] IntegerModuloP.getLimbs(Object element)}: the element's own limbs (radix 2^26 for Poly1305's field), not a copy. */
    static final MethodHandle LIMBS;
    /** Null when every handle is there, else the reason (for the start-up log). */
    static final String UNAVAILABLE;

    static {
        MethodHandle block = null;
        MethodHandle polyNew = null;
        MethodHandle polyInit = null;
        MethodHandle polyUpdate = null;
        MethodHandle polyFinal = null;
        MethodHandle polyA = null;
        MethodHandle polyR = null;
        MethodHandle limbs = null;
        String why = null;
        try {
            Class<?> chacha = Class.forName(PACKAGE + ".ChaCha20Cipher");
            Class<?> poly = Class.forName(PACKAGE + ".Poly1305");
            if (!Object.class.getModule().isOpen(PACKAGE, JdkInternals.class.getModule())) {
                throw new IllegalAccessException("java.base does not open " + PACKAGE + " to this module (--add-opens java.base/" + PACKAGE + "=ALL-UNNAMED)");
            }
            Class<?> element = Class.forName("sun.security.util.math.IntegerModuloP");
            if (!Object.class.getModule().isExported("sun.security.util.math", JdkInternals.class.getModule())) {
                throw new IllegalAccessException("java.base does not export sun.security.util.math to this module (--add-exports java.base/sun.security.util.math=ALL-UNNAMED)");
            }
            MethodHandles.Lookup inChacha = MethodHandles.privateLookupIn(chacha, MethodHandles.lookup());
            MethodHandles.Lookup inPoly = MethodHandles.privateLookupIn(poly, MethodHandles.lookup());
            block = inChacha.findStatic(chacha, "implChaCha20Block", MethodType.methodType(int.class, int[].class, byte[].class));
            polyNew = inPoly.findConstructor(poly, MethodType.methodType(void.class, boolean.class))
                    .asType(MethodType.methodType(Object.class, boolean.class));
            polyInit = inPoly.findVirtual(poly, "engineInit", MethodType.methodType(void.class, Key.class, AlgorithmParameterSpec.class))
                    .asType(MethodType.methodType(void.class, Object.class, Key.class, AlgorithmParameterSpec.class));
            polyUpdate = inPoly.findVirtual(poly, "engineUpdate", MethodType.methodType(void.class, byte[].class, int.class, int.class))
                    .asType(MethodType.methodType(void.class, Object.class, byte[].class, int.class, int.class));
            polyFinal = inPoly.findVirtual(poly, "engineDoFinal", MethodType.methodType(byte[].class))
                    .asType(MethodType.methodType(byte[].class, Object.class));
            polyA = inPoly.findGetter(poly, "a", Class.forName("sun.security.util.math.MutableIntegerModuloP"))
                    .asType(MethodType.methodType(Object.class, Object.class));
            polyR = inPoly.findGetter(poly, "r", element).asType(MethodType.methodType(Object.class, Object.class));
            limbs = MethodHandles.lookup().findVirtual(element, "getLimbs", MethodType.methodType(long[].class))
                    .asType(MethodType.methodType(long[].class, Object.class));
        } catch (ReflectiveOperationException | RuntimeException e) {
            why = e.getClass().getSimpleName() + ": " + e.getMessage();
            block = polyNew = polyInit = polyUpdate = polyFinal = polyA = polyR = limbs = null;
        }
        CHACHA_BLOCK = block;
        POLY_NEW = polyNew;
        POLY_INIT = polyInit;
        POLY_UPDATE = polyUpdate;
        POLY_FINAL = polyFinal;
        POLY_ACCUMULATOR = polyA;
        POLY_MULTIPLIER = polyR;
        LIMBS = limbs;
        UNAVAILABLE = why;
    }

    private JdkInternals() {
    }
}
