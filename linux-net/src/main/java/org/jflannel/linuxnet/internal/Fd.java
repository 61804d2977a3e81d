package org.jflannel.linuxnet.internal;

import com.sun.jna.LastErrorException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A file descriptor closed exactly once. A second close is a no-op rather than closing a number the
 * process may already have reused for something else.
 */
public final class Fd implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Fd.class);
    private static final int CLOSED = -1;

    private final AtomicInteger fd;
    private final String what;

    public Fd(int fd, String what) {
        if (fd < 0) {
            throw new IllegalArgumentException(what + ": invalid file descriptor " + fd);
        }
        this.fd = new AtomicInteger(fd);
        this.what = what;
    }

    /** The descriptor number; throws when already closed. */
    public int get() {
        int v = fd.get();
        if (v == CLOSED) {
            throw new IllegalStateException(what + ": file descriptor already closed");
        }
        return v;
    }

    public boolean isOpen() {
        return fd.get() != CLOSED;
    }

    @Override
    public void close() {
        int v = fd.getAndSet(CLOSED);
        if (v == CLOSED) {
            return;
        }
        try {
            LibC.close(v);
        } catch (LastErrorException e) {
            LOG.warn("{} close failed fd={} errno={}", what, v, e.getErrorCode());
        }
    }

    @Override
    public String toString() {
        return what + "(fd " + fd.get() + ")";
    }
}
