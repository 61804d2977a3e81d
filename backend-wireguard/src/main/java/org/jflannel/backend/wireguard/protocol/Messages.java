package org.jflannel.backend.wireguard.protocol;

/**
 * WireGuard's four message layouts (whitepaper §5.4): a little-endian 32-bit type (1 initiation,
 * 2 response, 3 cookie reply, 4 transport data), then the fields below at fixed offsets.
 */
public final class Messages {
    public static final int INITIATION = 1;
    public static final int RESPONSE = 2;
    public static final int COOKIE_REPLY = 3;
    public static final int DATA = 4;

    public static final int INITIATION_SIZE = 148;
    public static final int RESPONSE_SIZE = 92;
    public static final int COOKIE_REPLY_SIZE = 64;
    /** type, receiver index, counter. */
    public static final int DATA_HEADER = 16;
    public static final int DATA_MIN = DATA_HEADER + 16;

    // initiation: type 0, sender 4, ephemeral 8, static 40 (+16), timestamp 88 (+16), mac1 116, mac2 132
    static final int INIT_SENDER = 4;
    static final int INIT_EPHEMERAL = 8;
    static final int INIT_STATIC = 40;
    static final int INIT_TIMESTAMP = 88;
    // response: type 0, sender 4, receiver 8, ephemeral 12, empty 44 (+16), mac1 60, mac2 76
    static final int RESP_SENDER = 4;
    static final int RESP_RECEIVER = 8;
    static final int RESP_EPHEMERAL = 12;
    static final int RESP_EMPTY = 44;
    // cookie reply: type 0, receiver 4, nonce 8 (24), cookie 32 (16 + 16)
    static final int COOKIE_RECEIVER = 4;
    static final int COOKIE_NONCE = 8;
    static final int COOKIE_SEALED = 32;
    // data: type 0, receiver 4, counter 8, payload 16
    static final int DATA_RECEIVER = 4;
    static final int DATA_COUNTER = 8;

    private Messages() {
    }

    /** The message type, or -1 when the reserved bytes are not zero (not WireGuard). */
    public static int type(byte[] b, int off, int len) {
        if (len < 4 || b[off + 1] != 0 || b[off + 2] != 0 || b[off + 3] != 0) {
            return -1;
        }
        return b[off] & 0xff;
    }

    static int u32(byte[] b, int off) {
        return (b[off] & 0xff) | (b[off + 1] & 0xff) << 8 | (b[off + 2] & 0xff) << 16 | (b[off + 3] & 0xff) << 24;
    }

    static void u32(byte[] b, int off, int v) {
        b[off] = (byte) v;
        b[off + 1] = (byte) (v >>> 8);
        b[off + 2] = (byte) (v >>> 16);
        b[off + 3] = (byte) (v >>> 24);
    }

    static long u64(byte[] b, int off) {
        return (u32(b, off) & 0xffffffffL) | ((long) u32(b, off + 4)) << 32;
    }

    static void u64(byte[] b, int off, long v) {
        u32(b, off, (int) v);
        u32(b, off + 4, (int) (v >>> 32));
    }

    static byte[] slice(byte[] b, int off, int len) {
        byte[] out = new byte[len];
        System.arraycopy(b, off, out, 0, len);
        return out;
    }
}
