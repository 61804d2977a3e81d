package org.jflannel.linuxnet.sys;

import com.sun.jna.LastErrorException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.internal.Errno;
import org.jflannel.linuxnet.internal.Fd;
import org.jflannel.linuxnet.internal.LibC;

/**
 * systemd's readiness protocol (sd_notify(3)): one datagram such as {@code READY=1} over an
 * {@code AF_UNIX}/{@code SOCK_DGRAM} socket to the path in {@code $NOTIFY_SOCKET}, as Go's
 * {@code daemon.SdNotify(false, state)} from coreos/go-systemd sends it (the variable is left set).
 * A leading {@code @} names a socket in the Linux abstract namespace. Owns one short-lived socket
 * per call, closed before returning.
 */
public final class SdNotify {
    public static final String NOTIFY_SOCKET = "NOTIFY_SOCKET";

    /** sizeof(sockaddr_un.sun_path); a file system path also needs its terminating NUL in there. */
    static final int SUN_PATH_LEN = 108;
    private static final int SUN_PATH_OFFSET = 2;

    private SdNotify() {
    }

    /**
     * Sends {@code state} to the socket named by {@code NOTIFY_SOCKET} in {@code env}. Returns that
     * socket, or empty (nothing sent) when the variable is unset or empty. Never blocks: a receiver
     * whose queue is full is an EAGAIN error rather than a daemon stuck at start-up.
     */
    public static Optional<String> notify(Map<String, String> env, String state) throws NetlinkException {
        if (state == null || state.isEmpty()) {
            throw new IllegalArgumentException("sd_notify state: must not be empty");
        }
        String socket = env.get(NOTIFY_SOCKET);
        if (socket == null || socket.isEmpty()) {
            return Optional.empty();
        }
        byte[] addr = sockaddr(socket);
        byte[] msg = state.getBytes(StandardCharsets.UTF_8);
        String object = NOTIFY_SOCKET + "=" + socket;
        Fd fd;
        try {
            fd = new Fd(LibC.socket(LibC.AF_UNIX, LibC.SOCK_DGRAM | LibC.SOCK_CLOEXEC, 0), "sd_notify socket");
        } catch (LastErrorException e) {
            throw new NetlinkException("socket AF_UNIX", object, e.getErrorCode(), "");
        }
        try (fd) {
            LibC.sendto(fd.get(), msg, msg.length, LibC.MSG_DONTWAIT, addr, addr.length);
        } catch (LastErrorException e) {
            throw new NetlinkException("sendto", object, e.getErrorCode(), "");
        }
        return Optional.of(socket);
    }

    /**
     * struct sockaddr_un for {@code socket}, its length counting only the used bytes (as Go's
     * syscall package builds it): a path with its NUL; an abstract name ({@code @} turned into the
     * leading NUL) without one, since every byte of the given length is part of the name.
     */
    static byte[] sockaddr(String socket) throws NetlinkException {
        byte[] path = socket.getBytes(StandardCharsets.UTF_8);
        boolean abstractName = path[0] == '@';
        int max = abstractName ? SUN_PATH_LEN : SUN_PATH_LEN - 1;
        if (path.length > max) {
            throw new NetlinkException("sd_notify", NOTIFY_SOCKET + "=" + socket, Errno.EINVAL,
                    "path is " + path.length + " bytes, sockaddr_un holds at most " + max);
        }
        ByteBuffer b = ByteBuffer.allocate(SUN_PATH_OFFSET + path.length + (abstractName ? 0 : 1)).order(ByteOrder.nativeOrder());
        b.putShort((short) LibC.AF_UNIX).put(path);
        byte[] addr = b.array();
        if (abstractName) {
            addr[SUN_PATH_OFFSET] = 0;
        }
        return addr;
    }
}
