package org.jflannel.linuxnet.bpf;

import com.sun.jna.Memory;
import java.util.Optional;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.internal.BpfSys;
import org.jflannel.linuxnet.internal.Errno;
import org.jflannel.linuxnet.internal.Fd;

/**
 * An eBPF map (bpf(2) BPF_MAP_CREATE), read and written from here by key and value bytes in the
 * layout the programs that use it expect. Closing drops our reference; the kernel frees the map
 * when no program holds it either.
 */
public final class BpfMap implements AutoCloseable {
    /** The map types used here, with their kernel numbers. */
    public enum Type {
        HASH(1), ARRAY(2), LPM_TRIE(11);

        final int id;

        Type(int id) {
            this.id = id;
        }
    }

    /** BPF_F_NO_PREALLOC: required for LPM tries; for hashes, memory as entries come instead of all of it up front. */
    private static final int F_NO_PREALLOC = 1;

    private final Fd fd;
    private final String name;
    private final int keySize;
    private final int valueSize;

    private BpfMap(int fd, String name, int keySize, int valueSize) {
        this.fd = new Fd(fd, "bpf map " + name);
        this.name = name;
        this.keySize = keySize;
        this.valueSize = valueSize;
    }

    /**
     * Creates a map.
     *
     * @param name up to 15 characters of {@code [A-Za-z0-9_.]}, shown by {@code bpftool map}
     */
    public static BpfMap create(Type type, String name, int keySize, int valueSize, int maxEntries)
            throws NetlinkException {
        if (name.length() > 15 || !name.matches("[A-Za-z0-9_.]*")) {
            throw new IllegalArgumentException("bpf map name: up to 15 of [A-Za-z0-9_.], got " + name);
        }
        Memory attr = BpfSys.attr();
        attr.setInt(0, type.id);
        attr.setInt(4, keySize);
        attr.setInt(8, valueSize);
        attr.setInt(12, maxEntries);
        attr.setInt(16, type == Type.ARRAY ? 0 : F_NO_PREALLOC);
        byte[] n = name.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        attr.write(28, n, 0, n.length);
        int fd = BpfSys.call(BpfSys.MAP_CREATE, attr, "BPF_MAP_CREATE", name + " " + type, null);
        return new BpfMap(fd, name, keySize, valueSize);
    }

    /** Inserts or replaces the entry of {@code key}. */
    public void put(byte[] key, byte[] value) throws NetlinkException {
        check(key, keySize, "key");
        check(value, valueSize, "value");
        Memory k = BpfSys.copy(key);
        Memory v = BpfSys.copy(value);
        Memory attr = elem(k, v);
        BpfSys.call(BpfSys.MAP_UPDATE_ELEM, attr, "BPF_MAP_UPDATE_ELEM", name, null);
    }

    /** Deletes the entry of {@code key}; false when there was none. */
    public boolean delete(byte[] key) throws NetlinkException {
        check(key, keySize, "key");
        Memory k = BpfSys.copy(key);
        try {
            BpfSys.call(BpfSys.MAP_DELETE_ELEM, elem(k, null), "BPF_MAP_DELETE_ELEM", name, null);
            return true;
        } catch (NetlinkException e) {
            if (e.errno() == Errno.ENOENT) {
                return false;
            }
            throw e;
        }
    }

    /** The value of {@code key}, or empty when absent. */
    public Optional<byte[]> get(byte[] key) throws NetlinkException {
        check(key, keySize, "key");
        Memory k = BpfSys.copy(key);
        Memory v = new Memory(valueSize);
        v.clear();
        try {
            BpfSys.call(BpfSys.MAP_LOOKUP_ELEM, elem(k, v), "BPF_MAP_LOOKUP_ELEM", name, null);
        } catch (NetlinkException e) {
            if (e.errno() == Errno.ENOENT) {
                return Optional.empty();
            }
            throw e;
        }
        return Optional.of(v.getByteArray(0, valueSize));
    }

    /** The descriptor, for a program that refers to this map. */
    public int fd() {
        return fd.get();
    }

    public String name() {
        return name;
    }

    @Override
    public void close() {
        fd.close();
    }

    @Override
    public String toString() {
        return "bpf map " + name;
    }

    private Memory elem(Memory key, Memory value) {
        Memory attr = BpfSys.attr();
        attr.setInt(0, fd.get());
        attr.setLong(8, com.sun.jna.Pointer.nativeValue(key));
        if (value != null) {
            attr.setLong(16, com.sun.jna.Pointer.nativeValue(value));
        }
        return attr;
    }

    private void check(byte[] bytes, int size, String what) {
        if (bytes.length != size) {
            throw new IllegalArgumentException("bpf map " + name + ": " + what + " must be " + size + " bytes, got " + bytes.length);
        }
    }
}
