package org.jflannel.flanneld;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.LoggingEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.TimeZone;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The hand-written line is, byte for byte, what logback's pattern layout makes of {@link LogbackSetup#PATTERN}. */
class LineLayoutTest {
    private static final TimeZone DEFAULT = TimeZone.getDefault();
    private static final long[] TIMES = {
        0L, 1_764_028_800_123L, 1_764_071_999_999L, 1_751_328_000_007L, 951_782_400_000L, 4_102_444_799_999L,
    };

    @AfterEach
    void restoreZone() {
        TimeZone.setDefault(DEFAULT);
    }

    @ParameterizedTest
    @ValueSource(strings = {"UTC", "Asia/Kolkata", "America/St_Johns", "Europe/Berlin", "Pacific/Chatham", "Etc/GMT+11"})
    void linesAsThePatternMakesThem(String zone) {
        TimeZone.setDefault(TimeZone.getTimeZone(zone));
        LoggerContext context = new LoggerContext();
        PatternLayout reference = new PatternLayout();
        reference.setContext(context);
        reference.setPattern(LogbackSetup.PATTERN);
        reference.start();
        LineLayout layout = new LineLayout();
        layout.setContext(context);
        layout.start();
        Logger ours = context.getLogger("org.jflannel.flanneld.daemon.Daemon");
        Logger bare = context.getLogger("bare");
        Throwable nested = nested();
        for (long t : TIMES) {
            for (LoggingEvent e : new LoggingEvent[] {
                event(ours, Level.INFO, "lease acquired subnet={} ttl={}", null, t, "10.1.2.0/24", 86400),
                event(bare, Level.WARN, "no arguments\twith a tab", null, t),
                event(ours, Level.ERROR, "failed key={}", nested, t, "k"),
                event(ours, Level.DEBUG, "one frame", new IllegalStateException(), t),
                event(ours, Level.TRACE, "{} {}", null, t, null, "x"),
            }) {
                assertEquals(reference.doLayout(e), layout.doLayout(e), "zone " + zone + " time " + t);
            }
        }
    }

    private static LoggingEvent event(Logger logger, Level level, String message, Throwable thrown, long time,
            Object... args) {
        LoggingEvent e = new LoggingEvent(Logger.class.getName(), logger, level, message, thrown, args);
        e.setTimeStamp(time);
        return e;
    }

    /** A cause chain with common frames, a suppressed exception and more than 8 frames. */
    private static Throwable nested() {
        try {
            deep(12);
            throw new AssertionError("deep returns only by throwing");
        } catch (UncheckedIOException e) {
            e.addSuppressed(new IOException("suppressed\nsecond line"));
            return e;
        }
    }

    private static void deep(int n) {
        if (n > 0) {
            deep(n - 1);
            return;
        }
        try {
            throw new IOException("connection refused: 127.0.0.1:2379");
        } catch (IOException e) {
            throw new UncheckedIOException("etcd get", e);
        }
    }
}
