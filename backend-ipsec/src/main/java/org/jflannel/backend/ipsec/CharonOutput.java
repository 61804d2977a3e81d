package org.jflannel.backend.ipsec;

import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;

/**
 * One charon process's output (stdout and stderr, merged): copied line by line to its log file, or to
 * flanneld's stderr as upstream's charon writes there, and its last {@link #TAIL} lines kept, so that a charon
 * that exits at once (a broken config, a pidfile of a live process) is reported with what it said. Owns one
 * thread, {@code ipsec-charon-out}, which ends when charon's end of the pipe closes.
 */
final class CharonOutput {
    static final int TAIL = 8;

    private final ArrayDeque<String> tail = new ArrayDeque<>();
    private final Thread pump;

    private CharonOutput(InputStream in, Path log) {
        this.pump = new Thread(() -> copy(in, log), "ipsec-charon-out");
        this.pump.setDaemon(true);
    }

    /** Starts copying {@code process}'s output to {@code log} (null: flanneld's stderr). */
    static CharonOutput of(Process process, Path log) {
        CharonOutput out = new CharonOutput(process.getInputStream(), log);
        out.pump.start();
        return out;
    }

    private void copy(InputStream in, Path log) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
             OutputStream file = log == null ? null : new FileOutputStream(log.toFile(), true)) {
            PrintStream sink = file == null ? System.err : new PrintStream(file, true, StandardCharsets.UTF_8);
            String line;
            while ((line = r.readLine()) != null) {
                sink.println(line);
                synchronized (tail) {
                    if (tail.size() == TAIL) {
                        tail.removeFirst();
                    }
                    tail.addLast(line);
                }
            }
        } catch (IOException e) {
            System.err.println("charon output: " + e); // the pipe broke: charon's log is all that is lost
        }
    }

    /** Waits (at most {@code atMost}) until charon's output ended: after it exited, so the tail is complete. */
    void awaitEnd(Duration atMost) throws InterruptedException {
        pump.join(Math.max(1, atMost.toMillis()));
    }

    /** The last lines charon wrote (at most {@link #TAIL}). */
    List<String> tail() {
        synchronized (tail) {
            return List.copyOf(tail);
        }
    }

    /** The tail as one log-friendly value: lines joined by " | ", or "(none)". */
    String tailText() {
        List<String> t = tail();
        return t.isEmpty() ? "(none)" : String.join(" | ", t);
    }
}
