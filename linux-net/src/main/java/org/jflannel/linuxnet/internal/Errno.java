package org.jflannel.linuxnet.internal;

import java.util.Map;

/** Symbolic names of the Linux (x86_64/arm64 generic) errno values we are likely to meet. */
public final class Errno {
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int ESRCH = 3;
    public static final int EINTR = 4;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int EOPNOTSUPP = 95;
    public static final int EADDRNOTAVAIL = 99;
    public static final int ENOBUFS = 105;
    public static final int EMSGSIZE_SHORT = 90;

    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(1, "EPERM"), Map.entry(2, "ENOENT"), Map.entry(3, "ESRCH"), Map.entry(4, "EINTR"),
            Map.entry(5, "EIO"), Map.entry(6, "ENXIO"), Map.entry(7, "E2BIG"), Map.entry(9, "EBADF"),
            Map.entry(11, "EAGAIN"), Map.entry(12, "ENOMEM"), Map.entry(13, "EACCES"), Map.entry(14, "EFAULT"),
            Map.entry(16, "EBUSY"), Map.entry(17, "EEXIST"), Map.entry(18, "EXDEV"), Map.entry(19, "ENODEV"),
            Map.entry(20, "ENOTDIR"), Map.entry(21, "EISDIR"), Map.entry(22, "EINVAL"), Map.entry(23, "ENFILE"),
            Map.entry(24, "EMFILE"), Map.entry(25, "ENOTTY"), Map.entry(28, "ENOSPC"), Map.entry(30, "EROFS"),
            Map.entry(34, "ERANGE"), Map.entry(36, "ENAMETOOLONG"), Map.entry(38, "ENOSYS"),
            Map.entry(39, "ENOTEMPTY"), Map.entry(61, "ENODATA"), Map.entry(71, "EPROTO"),
            Map.entry(90, "EMSGSIZE"), Map.entry(93, "EPROTONOSUPPORT"), Map.entry(95, "EOPNOTSUPP"),
            Map.entry(97, "EAFNOSUPPORT"), Map.entry(98, "EADDRINUSE"), Map.entry(99, "EADDRNOTAVAIL"),
            Map.entry(100, "ENETDOWN"), Map.entry(101, "ENETUNREACH"), Map.entry(105, "ENOBUFS"),
            Map.entry(110, "ETIMEDOUT"), Map.entry(111, "ECONNREFUSED"), Map.entry(113, "EHOSTUNREACH"));

    private Errno() {
    }

    public static String name(int errno) {
        return NAMES.getOrDefault(errno, "errno");
    }
}
