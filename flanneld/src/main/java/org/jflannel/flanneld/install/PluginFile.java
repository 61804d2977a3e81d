package org.jflannel.flanneld.install;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The one-file CNI plugin as {@code packaging/plugin-file.sh} writes it:
 * {@code [static launcher | payload: ustar archive of the bundle | trailer]}, the 48-byte trailer being
 * {@code "JFLNPAY1"}, the payload's offset and size (u64, little-endian) and the bundle id (12 hex
 * digits, NUL-padded to 24 bytes).
 *
 * <p>{@code install-cni-plugin} unpacks the payload itself, so the image carries the bundle once (inside
 * the file) instead of twice. The reader is ours, not a library's: the archive is the one our build
 * writes ({@code tar --format=ustar}, directories, regular files and symbolic links only), the same
 * ~40 lines of format the static launcher (C) reads, and the daemon's jar then needs no archive library.
 * Anything else in it (another entry type, a name leaving the bundle, a size past the payload) is refused
 * with the field named.
 */
public final class PluginFile {
    static final String MAGIC = "JFLNPAY1";
    static final int TRAILER_SIZE = 48;
    private static final int BLOCK = 512;

    /** One archive entry; {@code name} relative to the bundle ("" for the bundle's own directory). */
    public record Entry(String name, Type type, int mode, long size, long mtimeSeconds, String linkTarget, long dataOffset) {
    }

    /** The entry types the build writes. */
    public enum Type { FILE, DIRECTORY, SYMLINK }

    private final Path file;
    private final long payloadOffset;
    private final long payloadSize;
    private final String id;

    private PluginFile(Path file, long payloadOffset, long payloadSize, String id) {
        this.file = file;
        this.payloadOffset = payloadOffset;
        this.payloadSize = payloadSize;
        this.id = id;
    }

    /** The trailer of {@code file}, if it is a one-file plugin (empty for any other file). */
    public static Optional<PluginFile> open(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size < TRAILER_SIZE) {
                return Optional.empty();
            }
            ByteBuffer t = readFully(ch, size - TRAILER_SIZE, TRAILER_SIZE).order(ByteOrder.LITTLE_ENDIAN);
            byte[] magic = new byte[8];
            t.get(magic);
            if (!MAGIC.equals(new String(magic, StandardCharsets.ISO_8859_1))) {
                return Optional.empty();
            }
            long offset = t.getLong();
            long length = t.getLong();
            byte[] idBytes = new byte[12];
            t.get(idBytes);
            String id = new String(idBytes, StandardCharsets.ISO_8859_1);
            if (!id.matches("[0-9a-f]{12}")) {
                throw new IOException(file + ": trailer id: expected 12 hex digits, got \"" + id + "\"");
            }
            if (offset < 0 || length < 0 || offset + length > size - TRAILER_SIZE) {
                throw new IOException(file + ": trailer payload offset=" + offset + " size=" + length + " lies outside the file (" + size + " bytes)");
            }
            return Optional.of(new PluginFile(file, offset, length, id));
        }
    }

    /** The bundle directory's name: {@code jflannel-<id>}. */
    public String bundle() {
        return "jflannel-" + id;
    }

    public Path file() {
        return file;
    }

    /** Every entry of the payload, in archive order (a directory before what it holds). */
    public List<Entry> entries() throws IOException {
        List<Entry> out = new ArrayList<>();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long pos = 0;
            while (pos + BLOCK <= payloadSize) {
                ByteBuffer h = readFully(ch, payloadOffset + pos, BLOCK);
                byte[] b = h.array();
                if (allZero(b)) {
                    break; // the end-of-archive blocks
                }
                String rawName = cString(b, 345, 155).isEmpty() ? cString(b, 0, 100) : cString(b, 345, 155) + "/" + cString(b, 0, 100);
                String where = file + ": payload entry \"" + rawName + "\"";
                if (!cString(b, 257, 6).equals("ustar")) {
                    throw new IOException(where + ": magic: expected ustar");
                }
                long size = octal(b, 124, 12, where + ": size");
                Type type = switch (b[156]) {
                    case '0', 0 -> Type.FILE;
                    case '5' -> Type.DIRECTORY;
                    case '2' -> Type.SYMLINK;
                    default -> throw new IOException(where + ": typeflag '" + (char) b[156] + "' (only files, directories and symbolic links)");
                };
                String name = relative(rawName, where);
                long data = pos + BLOCK;
                long dataBlocks = type == Type.FILE ? (size + BLOCK - 1) / BLOCK * BLOCK : 0;
                if (data + dataBlocks > payloadSize) {
                    throw new IOException(where + ": size " + size + " runs past the payload's end");
                }
                String link = type == Type.SYMLINK ? cString(b, 157, 100) : null;
                if (link != null && (link.startsWith("/") || List.of(link.split("/")).contains(".."))) {
                    throw new IOException(where + ": linkname \"" + link + "\" leaves the bundle");
                }
                out.add(new Entry(name, type, (int) octal(b, 100, 8, where + ": mode") & 07777, type == Type.FILE ? size : 0,
                        octal(b, 136, 12, where + ": mtime"), link, payloadOffset + data));
                pos = data + dataBlocks;
            }
        }
        return out;
    }

    /** Copies an entry's bytes into {@code target} (a channel open for writing). */
    void copyData(Entry e, FileChannel target) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long done = 0;
            while (done < e.size()) {
                long n = ch.transferTo(e.dataOffset() + done, e.size() - done, target);
                if (n <= 0) {
                    throw new IOException(file + ": payload entry \"" + e.name() + "\" ends early");
                }
                done += n;
            }
        }
    }

    /** "./jre/bin/java" → "jre/bin/java", "./" → ""; absolute names and ".." are refused. */
    private static String relative(String raw, String where) throws IOException {
        String n = raw;
        while (n.startsWith("./")) {
            n = n.substring(2);
        }
        if (n.equals(".")) {
            n = "";
        }
        if (n.endsWith("/")) {
            n = n.substring(0, n.length() - 1);
        }
        if (n.startsWith("/") || List.of(n.split("/")).contains("..")) {
            throw new IOException(where + ": name leaves the bundle");
        }
        return n;
    }

    private static long octal(byte[] b, int off, int len, String field) throws IOException {
        String s = cString(b, off, len).trim();
        if (s.isEmpty()) {
            return 0;
        }
        try {
            return Long.parseLong(s, 8);
        } catch (NumberFormatException e) {
            throw new IOException(field + ": not an octal number: \"" + s + "\"");
        }
    }

    private static String cString(byte[] b, int off, int len) {
        int end = off;
        while (end < off + len && b[end] != 0) {
            end++;
        }
        return new String(b, off, end - off, StandardCharsets.UTF_8);
    }

    private static boolean allZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    private static ByteBuffer readFully(FileChannel ch, long at, int n) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(n);
        while (buf.hasRemaining()) {
            if (ch.read(buf, at + buf.position()) < 0) {
                throw new IOException("unexpected end of file at " + (at + buf.position()));
            }
        }
        buf.flip();
        return buf;
    }
}
