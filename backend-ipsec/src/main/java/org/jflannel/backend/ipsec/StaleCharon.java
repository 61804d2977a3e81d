package org.jflannel.backend.ipsec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A charon left running by an earlier flanneld (SIGKILLed: Java cannot set upstream's Pdeathsig, so its child
 * outlives it). Found by charon's pidfile before we start ours: a live charon whose {@code STRONGSWAN_CONF} is
 * our conf is ended by its PID (SIGTERM, then SIGKILL), so that the new charon can start (charon refuses to
 * while the PID in its pidfile lives) and the daemon has exactly one charon, its child. A live charon with
 * another conf is not ours (the host's own strongSwan): refused with an error naming it. A live process that
 * is no charon means the PID was reused: the pidfile is removed. A dead PID is left to charon, which removes
 * its pidfile itself.
 */
final class StaleCharon {
    private static final Logger LOG = LoggerFactory.getLogger(StaleCharon.class);

    private StaleCharon() {
    }

    /** Ends our stale charon named by {@code pidFile} (null: nothing to check) whose conf is {@code charonConf}. */
    static void end(Path pidFile, Path charonConf, Duration grace) throws IOException, InterruptedException {
        if (pidFile == null) {
            return;
        }
        String text;
        try {
            text = Files.readString(pidFile, StandardCharsets.UTF_8).strip();
        } catch (NoSuchFileException e) {
            return;
        }
        long pid;
        try {
            pid = Long.parseLong(text);
        } catch (NumberFormatException e) {
            LOG.warn("charon pidfile unreadable: removed path={} content=\"{}\"", pidFile, text);
            Files.deleteIfExists(pidFile);
            return;
        }
        Optional<ProcessHandle> h = ProcessHandle.of(pid).filter(ProcessHandle::isAlive);
        if (h.isEmpty()) {
            return; // charon says "removing pidfile '/var/run/charon.pid', process not running"
        }
        Path proc = Path.of("/proc", Long.toString(pid));
        String comm = read(proc.resolve("comm")).strip();
        if (!comm.equals("charon")) {
            LOG.warn("charon pidfile names another process: removed path={} pid={} comm={}", pidFile, pid, comm);
            Files.deleteIfExists(pidFile);
            return;
        }
        String conf = "STRONGSWAN_CONF=" + charonConf;
        boolean ours = Arrays.asList(read(proc.resolve("environ")).split("\0")).contains(conf);
        if (!ours) {
            throw new IOException("charon pid=" + pid + " (pidfile " + pidFile + ") runs without " + conf
                    + ": not flanneld's; another IKE daemon on this host keeps ours from starting");
        }
        LOG.warn("stale charon found pid={} pidfile={}: ending it (left by an earlier flanneld)", pid, pidFile);
        ProcessHandle p = h.get();
        p.destroy();
        if (!exited(p, grace)) {
            p.destroyForcibly();
            if (!exited(p, grace)) {
                throw new IOException("stale charon pid=" + pid + " did not end on SIGKILL within " + grace);
            }
        }
        LOG.info("stale charon ended pid={}", pid);
    }

    private static boolean exited(ProcessHandle p, Duration grace) throws InterruptedException {
        try {
            p.onExit().get(grace.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new IllegalStateException("waiting for pid " + p.pid(), e);
        }
    }

    private static String read(Path f) throws IOException {
        try {
            return new String(Files.readAllBytes(f), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return ""; // it ended meanwhile
        }
    }
}
