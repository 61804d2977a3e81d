package org.jflannel.packet;

import java.nio.ByteBuffer;
import java.util.function.IntUnaryOperator;

/**
 * TCP/IPv6 packets for the tests, and independent IPv6 TCP checksum sums (byte-wise, {@link Packets#onesSum}),
 * never the code under test.
 */
final class Tcp6Packets {
    private Tcp6Packets() {
    }

    /**
     * fd00:10:244:1::2 -> fd00:10:244:2::3, ports 40000 -> 5201, window 501, 12 option bytes, {@code payload} bytes
     * {@code fill(i)}; the checksum field left 0. {@code firstWord}: version, traffic class and flow label.
     */
    static ByteBuffer segment(int firstWord, int hopLimit, int seq, int ack, int flags, int payload, IntUnaryOperator fill) {
        ByteBuffer p = ByteBuffer.allocateDirect(40 + 32 + payload);
        p.putInt(0, firstWord);
        p.putShort(4, (short) Math.min(32 + payload, 0xffff));
        p.put(6, (byte) 6);
        p.put(7, (byte) hopLimit);
        p.putLong(8, 0xfd00_0010_0244_0001L).putLong(16, 2).putLong(24, 0xfd00_0010_0244_0002L).putLong(32, 3);
        p.putShort(40, (short) 40000);
        p.putShort(42, (short) 5201);
        p.putInt(44, seq);
        p.putInt(48, ack);
        p.put(52, (byte) (8 << 4));
        p.put(53, (byte) flags);
        p.putShort(54, (short) 501);
        for (int i = 0; i < 12; i++) {
            p.put(60 + i, (byte) (i < 2 ? 1 : 8));
        }
        for (int i = 0; i < payload; i++) {
            p.put(72 + i, (byte) fill.applyAsInt(i));
        }
        return p;
    }

    /** The one's complement sum of the IPv6 pseudo-header and the TCP segment of the packet at [0, limit). */
    static int onesSumTcp6(ByteBuffer p) {
        int tcpLength = p.limit() - 40;
        byte[] b = new byte[40 + tcpLength];
        for (int i = 0; i < 32; i++) {
            b[i] = p.get(8 + i);
        }
        b[34] = (byte) (tcpLength >>> 8);
        b[35] = (byte) tcpLength;
        b[39] = 6;
        for (int i = 0; i < tcpLength; i++) {
            b[40 + i] = p.get(40 + i);
        }
        return Packets.onesSum(b);
    }

    /** The sum of the IPv6 pseudo-header alone (addresses, length, next header). */
    static long pseudoSum6(ByteBuffer p) {
        int tcpLength = p.limit() - 40;
        byte[] b = new byte[40];
        for (int i = 0; i < 32; i++) {
            b[i] = p.get(8 + i);
        }
        b[34] = (byte) (tcpLength >>> 8);
        b[35] = (byte) tcpLength;
        b[39] = 6;
        return Packets.onesSum(b);
    }
}
