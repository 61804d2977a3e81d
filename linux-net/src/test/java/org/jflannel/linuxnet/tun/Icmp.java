package org.jflannel.linuxnet.tun;

import java.nio.ByteBuffer;

/** Turns an IPv4 ICMP echo request (position 0..limit) into the matching echo reply in place. */
final class Icmp {
    private Icmp() {
    }

    static void turnIntoEchoReply(ByteBuffer p) {
        int ihl = (p.get(0) & 0x0f) * 4;
        for (int i = 0; i < 4; i++) {   // swap source and destination; the IP checksum is unchanged
            byte s = p.get(12 + i);
            p.put(12 + i, p.get(16 + i));
            p.put(16 + i, s);
        }
        p.put(ihl, (byte) 0);            // type 0: echo reply
        p.putShort(ihl + 2, (short) 0);
        p.putShort(ihl + 2, (short) checksum(p, ihl, p.limit()));
    }

    static int checksum(ByteBuffer p, int from, int to) {
        long sum = 0;
        for (int i = from; i < to; i += 2) {
            int hi = p.get(i) & 0xff;
            int lo = i + 1 < to ? p.get(i + 1) & 0xff : 0;
            sum += (hi << 8) | lo;
        }
        while ((sum >> 16) != 0) {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        return (int) (~sum & 0xffff);
    }
}
