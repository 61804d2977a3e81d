package org.jflannel.backend.wireguard.crypto;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/** RFC 8439 §2.8.2's AEAD example (the start-up self-test's known answer; the tests have the others). */
final class Rfc8439 {
    static final byte[] KEY = HexFormat.of().parseHex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f");
    /** The nonce 07000000 4041424344454647: the first word, then the 64-bit rest little endian. */
    static final int FIXED = 7;
    static final long COUNTER = 0x4746454443424140L;
    static final byte[] AAD = HexFormat.of().parseHex("50515253c0c1c2c3c4c5c6c7");
    static final byte[] PLAIN = ("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future,"
            + " sunscreen would be it.").getBytes(StandardCharsets.US_ASCII);
    static final String SEALED_HEX = "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b"
            + "1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d2"
            + "6586cec64b6116"
            + "1ae10b594f09e26a7e902ecbd0600691";

    private Rfc8439() {
    }
}
