package org.jflannel.cni;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The fast path's wire format between the launcher and flanneld (docs/cni-plugin.md, "The fast
 * path"): frames of {@code u32 length | u8 version | u8 type | payload}, integers big-endian, byte
 * strings as {@code u32 length | bytes}. A frame of another version, or one longer than its bound,
 * ends the exchange: the launcher then runs the plugin's own JVM. Version 2: a step frame carries
 * one or more steps, which the launcher performs in order until one fails (one round trip for
 * "write the scratch file, find the delegate, run it"); the done frame carries steps whose outcome
 * does not matter (removing the scratch file), performed before the result is printed; the request
 * carries the launcher's own scratch file as {@link #READ_SCRATCH} would reply (DEL needs it first).
 */
final class Wire {

    static final int VERSION = 2;
    /**
     * The framing of {@link #ACCEPTED} and {@link #FALLBACK} in every version: empty frames every launcher
     * and daemon since the first understand, so a launcher and a daemon of different versions part at
     * once and quietly (the daemon sends "accepted" before it has read which version the launcher speaks).
     */
    static final int FIRST_VERSION = 1;

    /** Launcher to daemon: the request; the reply to a step. */
    static final int REQUEST = 'Q';
    static final int REPLY = 'R';
    /** Daemon to launcher: accepted (sent at once; the launcher then waits longer); run your own JVM;
     * perform a step; print this and exit. */
    static final int ACCEPTED = 'A';
    static final int FALLBACK = 'F';
    static final int STEP = 'S';
    static final int DONE = 'D';

    /** Steps. */
    static final int FIND = 1;
    static final int EXEC = 2;
    static final int WRITE_SCRATCH = 3;
    static final int READ_SCRATCH = 4;
    static final int REMOVE_SCRATCH = 5;

    /** Bounds the daemon applies: a request (environment and stdin), a step's reply (a delegate's output). */
    static final int MAX_REQUEST = 1 << 20;
    static final int MAX_REPLY = 9 << 20;
    static final int MAX_ENV = 4096;

    private Wire() {
    }

    /** One frame, read. */
    record Frame(int version, int type, ByteBuffer payload) {
        int u8() throws MalformedException {
            need(1);
            return payload.get() & 0xff;
        }

        int i32() throws MalformedException {
            need(4);
            return payload.getInt();
        }

        byte[] bytes() throws MalformedException {
            int n = i32();
            if (n < 0) {
                throw new MalformedException("negative length " + n);
            }
            need(n);
            byte[] b = new byte[n];
            payload.get(b);
            return b;
        }

        String string() throws MalformedException {
            return new String(bytes(), StandardCharsets.UTF_8);
        }

        void end() throws MalformedException {
            if (payload.hasRemaining()) {
                throw new MalformedException(payload.remaining() + " bytes after the message");
            }
        }

        private void need(int n) throws MalformedException {
            if (payload.remaining() < n) {
                throw new MalformedException("message truncated");
            }
        }
    }

    /** A frame that does not parse. */
    static final class MalformedException extends Exception {
        private static final long serialVersionUID = 1L;

        MalformedException(String message) {
            super(message);
        }
    }

    /** Reads one frame of at most {@code max} bytes; EOF before its first byte is {@link EOFException}. */
    static Frame read(InputStream in, int max) throws IOException, MalformedException {
        DataInputStream d = new DataInputStream(in);
        int len = d.readInt();
        if (len < 2 || len > max) {
            throw new MalformedException("frame length " + Integer.toUnsignedString(len) + " outside 2.." + max);
        }
        byte[] body = new byte[len];
        d.readFully(body);
        return new Frame(body[0] & 0xff, body[1] & 0xff, ByteBuffer.wrap(body, 2, len - 2).slice());
    }

    /** Builds one frame, or (without a type) a part of one: a step. */
    static final class Builder {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private final boolean frame;

        Builder(int type) {
            this(type, type == ACCEPTED || type == FALLBACK ? FIRST_VERSION : VERSION);
        }

        private Builder(int type, int version) {
            frame = true;
            out.write(0);
            out.write(0);
            out.write(0);
            out.write(0);
            out.write(version);
            out.write(type);
        }

        private Builder() {
            frame = false;
        }

        /** One step of a {@link #STEP} or {@link #DONE} frame: its op, then its arguments. */
        static Builder step(int op) {
            Builder b = new Builder();
            b.out.write(op);
            return b;
        }

        /** A part built by {@link #step}, appended as it is. */
        Builder raw(Builder part) {
            if (part.frame) {
                throw new IllegalArgumentException("a frame is not a part");
            }
            out.write(part.out.toByteArray(), 0, part.out.size());
            return this;
        }

        Builder u8(int v) {
            out.write(v);
            return this;
        }

        Builder i32(int v) {
            out.write(v >>> 24);
            out.write(v >>> 16);
            out.write(v >>> 8);
            out.write(v);
            return this;
        }

        Builder bytes(byte[] b) {
            i32(b.length);
            out.write(b, 0, b.length);
            return this;
        }

        Builder string(String s) {
            return bytes(s.getBytes(StandardCharsets.UTF_8));
        }

        void writeTo(OutputStream os) throws IOException {
            if (!frame) {
                throw new IllegalStateException("a step is sent inside a frame");
            }
            byte[] b = out.toByteArray();
            ByteBuffer.wrap(b).putInt(0, b.length - 4);
            os.write(b);
            os.flush();
        }
    }

    /** Go's text for the errno values a step reports (syscall.Errno.Error()). */
    static String errnoText(int errno) {
        return switch (errno) {
            case 1 -> "operation not permitted";
            case 2 -> "no such file or directory";
            case 5 -> "input/output error";
            case 8 -> "exec format error";
            case 12 -> "cannot allocate memory";
            case 13 -> "permission denied";
            case 17 -> "file exists";
            case 20 -> "not a directory";
            case 21 -> "is a directory";
            case 26 -> "text file busy";
            case 27 -> "file too large";
            case 28 -> "no space left on device";
            case 30 -> "read-only file system";
            case 40 -> "too many levels of symbolic links";
            default -> "errno " + errno;
        };
    }
}
