package org.jflannel.packet;

import java.nio.ByteBuffer;

/** Independent IPv6 TCP checksum sums for the tests (byte-wise, {@link Packets#onesSum}), never the code under test. */
final class Tcp6Sums {
    private Tcp6Sums() {
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
