package org.jflannel.flanneld.daemon;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;

/**
 * When the daemon stops (REFERENCE §9.3): SIGINT or SIGTERM, or the etcd lease being revoked. The
 * first signal asks for a clean stop; a second one ends the process at once, as upstream (which
 * restores Go's default signal behaviour after the first).
 */
public final class Shutdown {
    private static final Logger LOG = LoggerFactory.getLogger(Shutdown.class);

    private final CountDownLatch requested = new CountDownLatch(1);
    private final AtomicInteger signals = new AtomicInteger();
    private volatile String reason = "";

    /** Installs the SIGINT/SIGTERM handlers (they replace the JVM's: no shutdown hooks run on a signal). */
    public void installSignalHandlers() {
        for (String name : new String[] {"INT", "TERM"}) {
            Signal.handle(new Signal(name), this::onSignal);
        }
        LOG.info("Installing signal handlers");
    }

    private void onSignal(Signal signal) {
        if (signals.incrementAndGet() > 1) {
            LOG.warn("second signal, exiting at once signal=SIG{}", signal.getName());
            Runtime.getRuntime().halt(128 + signal.getNumber());
        }
        request("signal SIG" + signal.getName());
    }

    public void request(String why) {
        if (requested.getCount() > 0) {
            reason = why;
            LOG.info("shutdown requested reason={}", why);
            requested.countDown();
        }
    }

    public boolean requested() {
        return requested.getCount() == 0;
    }

    /** Waits up to {@code timeout}; true when a stop was requested. */
    public boolean await(Duration timeout) throws InterruptedException {
        return requested.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    public void await() throws InterruptedException {
        requested.await();
    }

    public String reason() {
        return reason;
    }
}
