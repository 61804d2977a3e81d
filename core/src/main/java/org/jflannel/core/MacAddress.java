package org.jflannel.core;

import java.security.SecureRandom;
import java.util.HexFormat;

/** A 48-bit Ethernet address held in the low bits of a long. */
public record MacAddress(long value) {
    private static final SecureRandom RANDOM = new SecureRandom();

    public MacAddress {
        if ((value & ~0xffff_ffff_ffffL) != 0) {
            throw new IllegalArgumentException("MAC address must fit in 48 bits: " + Long.toHexString(value));
        }
    }

    /** Parses {@code 12:c6:65:89:b4:e3} (either case). */
    public static MacAddress parse(String text) {
        if (text.length() != 17) {
            throw new IllegalArgumentException("invalid MAC address: " + text);
        }
        long v = 0;
        for (int i = 0; i < 6; i++) {
            int at = i * 3;
            if (i > 0 && text.charAt(at - 1) != ':') {
                throw new IllegalArgumentException("invalid MAC address: " + text);
            }
            int hi = hexDigit(text.charAt(at));
            int lo = hexDigit(text.charAt(at + 1));
            if (hi < 0 || lo < 0) {
                throw new IllegalArgumentException("invalid MAC address: " + text);
            }
            v = (v << 8) | (hi << 4) | lo;
        }
        return new MacAddress(v);
    }

    /** ASCII hex only: Character.digit would also take other scripts' digits (e.g. U+0663). */
    private static int hexDigit(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }

    public static MacAddress of(byte[] bytes) {
        if (bytes.length != 6) {
            throw new IllegalArgumentException("MAC address needs 6 bytes, got " + bytes.length);
        }
        long v = 0;
        for (byte b : bytes) {
            v = (v << 8) | (b & 0xff);
        }
        return new MacAddress(v);
    }

    /** A random locally administered unicast address, as flannel makes for its VTEP (first byte (b0 &amp; 0xfe) | 0x02). */
    public static MacAddress randomLocal() {
        byte[] b = new byte[6];
        RANDOM.nextBytes(b);
        b[0] = (byte) ((b[0] & 0xfe) | 0x02);
        return of(b);
    }

    public byte[] bytes() {
        byte[] b = new byte[6];
        for (int i = 0; i < 6; i++) {
            b[i] = (byte) (value >>> (40 - 8 * i));
        }
        return b;
    }

    @Override
    public String toString() {
        return HexFormat.ofDelimiter(":").formatHex(bytes());
    }
}
