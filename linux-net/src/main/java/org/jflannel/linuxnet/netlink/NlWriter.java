package org.jflannel.linuxnet.netlink;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Builds one netlink message (nlmsghdr, a fixed family header, rtattrs with nesting and 4-byte
 * alignment) into a reused buffer in host byte order. Pure Java: the codec tests run without root.
 */
final class NlWriter {
    static final int HDRLEN = 16;

    private final ByteBuffer buf;
    private int start;

    NlWriter(ByteBuffer buf) {
        this.buf = buf.order(ByteOrder.nativeOrder());
    }

    static NlWriter heap(int capacity) {
        return new NlWriter(ByteBuffer.allocate(capacity));
    }

    ByteBuffer buffer() {
        return buf;
    }

    /** Starts a message; the length is filled in by {@link #finish()}. */
    NlWriter begin(int type, int flags, int seq) {
        buf.clear();
        start = 0;
        buf.putInt(0).putShort((short) type).putShort((short) flags).putInt(seq).putInt(0);
        return this;
    }

    /**
     * Starts a message after the ones already in the buffer (a pipelined batch: several requests in
     * one datagram); close it with {@link #endMessage()}.
     */
    NlWriter append(int type, int flags, int seq) {
        pad();
        start = buf.position();
        buf.putInt(0).putShort((short) type).putShort((short) flags).putInt(seq).putInt(0);
        return this;
    }

    /** Writes the length of the message begun by {@link #append} and pads it to 4 bytes. */
    void endMessage() {
        buf.putInt(start, buf.position() - start);
        pad();
    }

    NlWriter u8(int v) {
        buf.put((byte) v);
        return this;
    }

    NlWriter u16(int v) {
        buf.putShort((short) v);
        return this;
    }

    NlWriter u32(int v) {
        buf.putInt(v);
        return this;
    }

    NlWriter raw(byte[] b) {
        buf.put(b);
        return this;
    }

    /** An ifinfomsg (16 bytes). */
    NlWriter ifinfomsg(int family, int index, int flags, int change) {
        return u8(family).u8(0).u16(0).u32(index).u32(flags).u32(change);
    }

    NlWriter attr(int type, byte[] value) {
        header(type, value.length);
        buf.put(value);
        return pad();
    }

    NlWriter attrU8(int type, int v) {
        header(type, 1);
        buf.put((byte) v);
        return pad();
    }

    NlWriter attrU16(int type, int v) {
        header(type, 2);
        buf.putShort((short) v);
        return pad();
    }

    /** A 16-bit value in network byte order (IFLA_VXLAN_PORT). */
    NlWriter attrBe16(int type, int v) {
        header(type, 2);
        buf.put((byte) (v >>> 8)).put((byte) v);
        return pad();
    }

    NlWriter attrU32(int type, int v) {
        header(type, 4);
        buf.putInt(v);
        return pad();
    }

    NlWriter attrFlag(int type) {
        header(type, 0);
        return this;
    }

    NlWriter attrIp(int type, InetAddress ip) {
        return attr(type, ip.getAddress());
    }

    /** A NUL-terminated string. */
    NlWriter attrString(int type, String s) {
        byte[] b = s.getBytes(StandardCharsets.US_ASCII);
        header(type, b.length + 1);
        buf.put(b).put((byte) 0);
        return pad();
    }

    /** Opens a nested attribute; pass the result to {@link #end(int)}. */
    int nest(int type) {
        int at = buf.position();
        header(type, 0);
        return at;
    }

    NlWriter end(int nestStart) {
        buf.putShort(nestStart, (short) (buf.position() - nestStart));
        return this;
    }

    /** Writes nlmsg_len and flips the buffer for sending. */
    ByteBuffer finish() {
        buf.putInt(0, buf.position());
        buf.flip();
        return buf;
    }

    /** Test helper: the finished message as bytes. */
    byte[] finishBytes() {
        ByteBuffer b = finish();
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    private void header(int type, int len) {
        buf.putShort((short) (4 + len)).putShort((short) type);
    }

    private NlWriter pad() {
        while ((buf.position() & 3) != 0) {
            buf.put((byte) 0);
        }
        return this;
    }
}
