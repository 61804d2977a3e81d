package org.jflannel.linuxnet.netns;

import com.sun.jna.LastErrorException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.internal.Errno;
import org.jflannel.linuxnet.internal.LibC;

/** The mount work behind named namespaces, following iproute2's ip/ipnetns.c. */
final class NetNsMounts {
    private NetNsMounts() {
    }

    /**
     * Makes /run/netns a shared mount point (bind-mounting it onto itself first when it is not a
     * mount point), so unmounting a namespace file propagates to other mount namespaces and frees it.
     */
    static void makeRunDirShared(Path runDir) throws NetlinkException {
        String dir = runDir.toString();
        boolean madeMount = false;
        while (true) {
            try {
                LibC.mount("", dir, "none", LibC.MS_SHARED | LibC.MS_REC, null);
                return;
            } catch (LastErrorException e) {
                if (e.getErrorCode() != Errno.EINVAL || madeMount) {
                    throw new NetlinkException("mount --make-rshared", dir, e.getErrorCode(), "");
                }
            }
            try {
                LibC.mount(dir, dir, "none", LibC.MS_BIND | LibC.MS_REC, null);
            } catch (LastErrorException e) {
                throw new NetlinkException("mount --rbind", dir, e.getErrorCode(), "");
            }
            madeMount = true;
        }
    }

    /**
     * On a short-lived platform thread: unshare(CLONE_NEWNET), then bind-mount that thread's new
     * namespace onto {@code target}. Unsharing only a thread leaves the rest of the JVM where it was.
     */
    static void unshareAndBind(Path target) throws IOException {
        AtomicReference<NetlinkException> failure = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                LibC.unshare(LibC.CLONE_NEWNET);
            } catch (LastErrorException e) {
                failure.set(new NetlinkException("unshare", "CLONE_NEWNET", e.getErrorCode(), ""));
                return;
            }
            try {
                LibC.mount("/proc/thread-self/ns/net", target.toString(), "none", LibC.MS_BIND, null);
            } catch (LastErrorException e) {
                failure.set(new NetlinkException("mount --bind", target.toString(), e.getErrorCode(), ""));
            }
        }, "netns-create");
        t.start();
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while creating " + target, e);
        }
        if (failure.get() != null) {
            throw failure.get();
        }
    }

    static void unmountAndRemove(Path path) throws IOException {
        try {
            LibC.umount2(path.toString(), LibC.MNT_DETACH);
        } catch (LastErrorException e) {
            if (!NetNs.quietErrno(e.getErrorCode())) {
                throw new NetlinkException("umount", path.toString(), e.getErrorCode(), "");
            }
        }
        Files.deleteIfExists(path);
    }
}
