package org.jflannel.backend.ipsec.vici;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;

/**
 * strongSwan's VICI wire format (src/libcharon/plugins/vici/README.md): a packet is a 32-bit big-endian
 * length, a type byte, for named types an 8-bit-length name, then the message: a sequence of elements
 * SECTION_START(name) / SECTION_END / KEY_VALUE(name, 16-bit-length value) / LIST_START(name) /
 * LIST_ITEM(value) / LIST_END. Pure; the decoder bounds every length against the packet and the
 * nesting depth, and fails with the offset and what it found.
 */
public final class ViciCodec {
    public static final int CMD_REQUEST = 0;
    public static final int CMD_RESPONSE = 1;
    public static final int CMD_UNKNOWN = 2;
    public static final int EVENT_REGISTER = 3;
    public static final int EVENT_UNREGISTER = 4;
    public static final int EVENT_CONFIRM = 5;
    public static final int EVENT_UNKNOWN = 6;
    public static final int EVENT = 7;

    static final int SECTION_START = 1;
    static final int SECTION_END = 2;
    static final int KEY_VALUE = 3;
    static final int LIST_START = 4;
    static final int LIST_ITEM = 5;
    static final int LIST_END = 6;

    /** charon's own limit (VICI_MESSAGE_SIZE_MAX): larger packets are refused before reading them. */
    public static final int MAX_PACKET = 512 * 1024;
    /** Deeper than any message charon sends (list-sas nests 4). */
    public static final int MAX_DEPTH = 16;

    /** A decoded packet: type, name (null for unnamed types) and message (empty when none). */
    public record Packet(int type, String name, ViciMessage message) {
    }

    private ViciCodec() {
    }

    static boolean named(int type) {
        return type == CMD_REQUEST || type == EVENT_REGISTER || type == EVENT_UNREGISTER || type == EVENT;
    }

    /** The packet, length prefix included. */
    public static byte[] encode(int type, String name, ViciMessage message) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        out.write(0);
        out.write(0);
        out.write(0);
        out.write(0);
        out.write(type);
        if (named(type)) {
            name(out, name, "packet name");
        }
        if (message != null) {
            message(out, message, 0);
        }
        byte[] b = out.toByteArray();
        int len = b.length - 4;
        if (len > MAX_PACKET) {
            throw new IllegalArgumentException("vici packet " + name + ": " + len + " bytes exceed " + MAX_PACKET);
        }
        ByteBuffer.wrap(b).putInt(0, len);
        return b;
    }

    private static void message(ByteArrayOutputStream out, ViciMessage m, int depth) {
        if (depth >= MAX_DEPTH) {
            throw new IllegalArgumentException("vici message: nesting deeper than " + MAX_DEPTH);
        }
        for (Map.Entry<String, Object> e : m.entries().entrySet()) {
            String key = e.getKey();
            if (e.getValue() instanceof String v) {
                out.write(KEY_VALUE);
                name(out, key, "key");
                value(out, v, key);
            } else if (e.getValue() instanceof List<?> l) {
                out.write(LIST_START);
                name(out, key, "list name");
                for (Object item : l) {
                    out.write(LIST_ITEM);
                    value(out, (String) item, key);
                }
                out.write(LIST_END);
            } else {
                out.write(SECTION_START);
                name(out, key, "section name");
                message(out, (ViciMessage) e.getValue(), depth + 1);
                out.write(SECTION_END);
            }
        }
    }

    private static void name(ByteArrayOutputStream out, String name, String what) {
        byte[] b = name.getBytes(StandardCharsets.UTF_8);
        if (b.length == 0 || b.length > 255) {
            throw new IllegalArgumentException("vici " + what + " \"" + name + "\": must be 1..255 bytes, got " + b.length);
        }
        out.write(b.length);
        out.writeBytes(b);
    }

    private static void value(ByteArrayOutputStream out, String v, String key) {
        byte[] b = v.getBytes(StandardCharsets.UTF_8);
        if (b.length > 65535) {
            throw new IllegalArgumentException("vici value of \"" + key + "\": " + b.length + " bytes exceed 65535");
        }
        out.write(b.length >>> 8);
        out.write(b.length);
        out.writeBytes(b);
    }

    /** Decodes one packet without its length prefix. */
    public static Packet decode(byte[] packet) throws ViciException {
        Reader r = new Reader(packet);
        int type = r.u8("packet type");
        if (type > EVENT) {
            throw new ViciException("vici: unknown packet type " + type);
        }
        String name = named(type) ? r.name("packet name") : null;
        return new Packet(type, name, r.message());
    }

    /** A bounded cursor over one packet. */
    private static final class Reader {
        private final byte[] b;
        private int at;

        Reader(byte[] b) {
            this.b = b;
        }

        int u8(String what) throws ViciException {
            need(1, what);
            return b[at++] & 0xff;
        }

        String name(String what) throws ViciException {
            int len = u8(what + " length");
            return text(len, what);
        }

        String value(String key) throws ViciException {
            need(2, "value length of \"" + key + "\"");
            int len = ((b[at] & 0xff) << 8) | (b[at + 1] & 0xff);
            at += 2;
            return text(len, "value of \"" + key + "\"");
        }

        private String text(int len, String what) throws ViciException {
            need(len, what);
            String s = new String(b, at, len, StandardCharsets.UTF_8);
            at += len;
            return s;
        }

        private void need(int n, String what) throws ViciException {
            if (at + n > b.length) {
                throw new ViciException("vici: truncated " + what + " at offset " + at + " (" + n + " bytes wanted, "
                        + (b.length - at) + " left)");
            }
        }

        ViciMessage message() throws ViciException {
            Deque<ViciMessage.Builder> open = new ArrayDeque<>();
            Deque<String> names = new ArrayDeque<>();
            ViciMessage.Builder cur = ViciMessage.builder();
            List<String> list = null;
            String listName = null;
            while (at < b.length) {
                int start = at;
                int el = u8("element type");
                try {
                    if (list != null && el != LIST_ITEM && el != LIST_END) {
                        throw new ViciException("vici: element type " + el + " inside list \"" + listName
                                + "\" at offset " + start);
                    }
                    switch (el) {
                        case SECTION_START -> {
                            String n = name("section name");
                            if (open.size() + 1 >= MAX_DEPTH) {
                                throw new ViciException("vici: sections nested deeper than " + MAX_DEPTH + " at offset " + start);
                            }
                            open.push(cur);
                            names.push(n);
                            cur = ViciMessage.builder();
                        }
                        case SECTION_END -> {
                            if (open.isEmpty()) {
                                throw new ViciException("vici: SECTION_END without a section at offset " + start);
                            }
                            ViciMessage done = cur.buildFrozen();
                            cur = open.pop();
                            cur.put(names.pop(), done);
                        }
                        case KEY_VALUE -> {
                            String k = name("key");
                            cur.put(k, value(k));
                        }
                        case LIST_START -> {
                            listName = name("list name");
                            list = cur.startList(listName);
                        }
                        case LIST_ITEM -> {
                            if (list == null) {
                                throw new ViciException("vici: LIST_ITEM outside a list at offset " + start);
                            }
                            list.add(value(listName));
                        }
                        case LIST_END -> {
                            if (list == null) {
                                throw new ViciException("vici: LIST_END outside a list at offset " + start);
                            }
                            list = null;
                        }
                        default -> throw new ViciException("vici: unknown element type " + el + " at offset " + start);
                    }
                } catch (IllegalArgumentException e) { // a duplicate key
                    throw new ViciException(e.getMessage() + " at offset " + start);
                }
            }
            if (list != null) {
                throw new ViciException("vici: list \"" + listName + "\" not closed at the end of the packet");
            }
            if (!open.isEmpty()) {
                throw new ViciException("vici: section \"" + names.peek() + "\" not closed at the end of the packet");
            }
            return cur.buildFrozen();
        }
    }
}
