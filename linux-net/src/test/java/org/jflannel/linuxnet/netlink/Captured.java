package org.jflannel.linuxnet.netlink;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/** Kernel replies captured with strace (one datagram per line, hex), split into netlink messages. */
final class Captured {
    record Message(int type, int flags, ByteBuffer buf, int at, int length) {
        int payload() {
            return at + NlWriter.HDRLEN;
        }

        int payloadLength() {
            return length - NlWriter.HDRLEN;
        }
    }

    private Captured() {
    }

    static List<Message> messages(String resource) throws IOException {
        List<Message> out = new ArrayList<>();
        try (InputStream in = Captured.class.getResourceAsStream("/captured/" + resource)) {
            for (String line : new String(in.readAllBytes(), StandardCharsets.US_ASCII).split("\n")) {
                if (line.isBlank()) {
                    continue;
                }
                ByteBuffer b = ByteBuffer.wrap(HexFormat.of().parseHex(line.strip())).order(ByteOrder.LITTLE_ENDIAN);
                for (int at = 0; at + 16 <= b.limit(); ) {
                    int len = b.getInt(at);
                    out.add(new Message(b.getShort(at + 4) & 0xffff, b.getShort(at + 6) & 0xffff, b, at, len));
                    at += (len + 3) & ~3;
                }
            }
        }
        return out;
    }
}
