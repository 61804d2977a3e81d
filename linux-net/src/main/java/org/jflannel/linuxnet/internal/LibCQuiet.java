package org.jflannel.linuxnet.internal;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

/**
 * libc calls whose failure is an expected, frequent outcome on a hot path: they return -1 and
 * raise nothing. {@link LibC}'s versions throw a {@code LastErrorException}, which JNA builds (with
 * its stack trace) on every failure; a non-blocking read that finds its queue empty fails that way
 * once per burst of packets. Callers that need the errno repeat the call through {@link LibC}.
 */
public final class LibCQuiet {
    static {
        Native.register(LibCQuiet.class, NativeLibrary.getInstance("c"));
    }

    private LibCQuiet() {
    }

    /** read(2): the byte count, or -1 (EAGAIN on an empty non-blocking descriptor, or an error). */
    public static native long read(int fd, long buf, long len);
}
