package org.jflannel.linuxnet.netns;

import com.sun.jna.LastErrorException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jflannel.linuxnet.Names;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.internal.Errno;
import org.jflannel.linuxnet.internal.Fd;
import org.jflannel.linuxnet.internal.LibC;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A named network namespace under /run/netns, made and removed the way {@code ip netns add/delete}
 * does. Work inside it runs on one dedicated platform thread that has {@code setns()}ed into it, so
 * sockets opened there (an {@link RtNetlink}, a TUN) stay bound to the namespace, and threads
 * started from inside {@link #call} are born in it (a new thread inherits its creator's namespace). Owns the
 * namespace file descriptor and that thread; {@link #close()} releases both, {@link #delete()} also
 * removes the namespace.
 */
public final class NetNs implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(NetNs.class);
    static final Path RUN_DIR = Path.of("/run/netns");
    private static final Object CREATE_LOCK = new Object();

    /** Work for {@link #run(ThrowingRunnable)}. */
    @FunctionalInterface
    public interface ThrowingRunnable {
        void run() throws Exception;
    }

    private final String name;
    private final Path path;
    private final Fd fd;
    private final ExecutorService executor;
    private volatile Thread worker;

    private NetNs(String name, Path path, Fd fd) {
        this.name = name;
        this.path = path;
        this.fd = fd;
        this.executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "netns-" + name);
            t.setDaemon(true);
            return t;
        });
    }

    /** Creates {@code /run/netns/<name>} holding a fresh network namespace. Fails (EEXIST) when it exists. */
    public static NetNs create(String name) throws IOException {
        Names.checkNsName(name);
        Path path = RUN_DIR.resolve(name);
        synchronized (CREATE_LOCK) {
            Files.createDirectories(RUN_DIR);
            NetNsMounts.makeRunDirShared(RUN_DIR);
            try {
                new Fd(LibC.open(path.toString(), LibC.O_RDONLY | LibC.O_CREAT | LibC.O_EXCL | LibC.O_CLOEXEC, 0),
                        "netns file").close();
            } catch (LastErrorException e) {
                throw new NetlinkException("netns add", name, e.getErrorCode(), "cannot create " + path);
            }
        }
        try {
            NetNsMounts.unshareAndBind(path);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(path);
            throw e;
        }
        LOG.info("netns created name={}", name);
        return open(name);
    }

    /** Opens an existing named namespace. */
    public static NetNs open(String name) throws IOException {
        Names.checkNsName(name);
        Path path = RUN_DIR.resolve(name);
        try {
            return new NetNs(name, path, new Fd(LibC.open(path.toString(), LibC.O_RDONLY | LibC.O_CLOEXEC, 0),
                    "netns " + name));
        } catch (LastErrorException e) {
            throw new NetlinkException("netns open", name, e.getErrorCode(), "cannot open " + path);
        }
    }

    /** Removes the named namespace like {@code ip netns delete}; quiet when it is already gone. */
    public static void delete(String name) throws IOException {
        Names.checkNsName(name);
        NetNsMounts.unmountAndRemove(RUN_DIR.resolve(name));
    }

    public String name() {
        return name;
    }

    public Path path() {
        return path;
    }

    /** The namespace file descriptor; public for rtnetlink's IFLA_NET_NS_FD, not for callers outside linux-net. */
    public int fd() {
        return fd.get();
    }

    /** Runs {@code work} on this namespace's thread and returns its result; its exception is rethrown as is. */
    public <T> T call(Callable<T> work) throws Exception {
        if (Thread.currentThread() == worker) {
            return work.call(); // nested call from inside: already there
        }
        Future<T> f = executor.submit(() -> {
            enter();
            return work.call();
        });
        try {
            return f.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception ex) {
                throw ex;
            }
            throw (Error) cause;
        } catch (InterruptedException e) {
            f.cancel(true);
            throw e;
        }
    }

    public void run(ThrowingRunnable work) throws Exception {
        call(() -> {
            work.run();
            return null;
        });
    }

    private void enter() throws NetlinkException {
        if (worker == Thread.currentThread()) {
            return;
        }
        try {
            LibC.setns(fd.get(), LibC.CLONE_NEWNET);
        } catch (LastErrorException e) {
            throw new NetlinkException("setns", name, e.getErrorCode(), "");
        }
        worker = Thread.currentThread();
    }

    /** Closes this handle, then removes the namespace; quiet when it is already gone. */
    public void delete() throws IOException {
        close();
        NetNsMounts.unmountAndRemove(path);
        LOG.info("netns deleted name={}", name);
    }

    /** Stops the thread and closes the descriptor; the namespace itself stays. */
    @Override
    public void close() {
        executor.shutdownNow();
        try {
            if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
                LOG.warn("netns thread did not stop name={}", name);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        fd.close();
    }

    @Override
    public String toString() {
        return "netns " + name;
    }

    static boolean quietErrno(int errno) {
        return errno == Errno.ENOENT || errno == Errno.EINVAL;
    }
}
