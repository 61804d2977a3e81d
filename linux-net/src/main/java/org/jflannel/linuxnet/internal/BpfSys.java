package org.jflannel.linuxnet.internal;

import com.sun.jna.LastErrorException;
import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import org.jflannel.linuxnet.NetlinkException;

/**
 * bpf(2), which glibc does not wrap: the command, a zeroed {@code union bpf_attr} the caller fills
 * at the kernel's offsets, and its size. Control-plane only (maps, programs, links), so each call
 * allocates its own native memory.
 */
public final class BpfSys {
    public static final int MAP_CREATE = 0;
    public static final int MAP_LOOKUP_ELEM = 1;
    public static final int MAP_UPDATE_ELEM = 2;
    public static final int MAP_DELETE_ELEM = 3;
    public static final int PROG_LOAD = 5;
    public static final int PROG_TEST_RUN = 10;
    public static final int LINK_CREATE = 28;
    /** Bytes of {@code union bpf_attr} we pass: enough for every command used here; the rest stays zero. */
    public static final int ATTR_SIZE = 128;

    private static final long NR_BPF = "aarch64".equals(System.getProperty("os.arch")) ? 280 : 321;

    private BpfSys() {
    }

    /** A zeroed attribute block. */
    public static Memory attr() {
        Memory m = new Memory(ATTR_SIZE);
        m.clear();
        return m;
    }

    /** Native copy of {@code bytes} (a key, a value, instructions, a string). */
    public static Memory copy(byte[] bytes) {
        Memory m = new Memory(Math.max(1, bytes.length));
        m.clear();
        m.write(0, bytes, 0, bytes.length);
        return m;
    }

    /**
     * Runs {@code bpf(cmd, attr, ATTR_SIZE)}; returns its result (a new descriptor for the create
     * and load commands, 0 otherwise).
     *
     * @throws NetlinkException with {@code operation} and {@code object} in its message, and errno
     */
    public static int call(int cmd, Pointer attr, String operation, String object, String detail)
            throws NetlinkException {
        try {
            return (int) LibC.syscall(NR_BPF, cmd, Pointer.nativeValue(attr), ATTR_SIZE);
        } catch (LastErrorException e) {
            throw new NetlinkException(operation, object, e.getErrorCode(), detail);
        }
    }
}
