package org.jflannel.flanneld;

import ch.qos.logback.classic.pattern.ThrowableProxyConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.LayoutBase;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.TimeZone;
import java.util.regex.Pattern;

/**
 * The daemon's log line, written out by hand: what the pattern
 * {@code %d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{0}: %msg%replace(%ex{8}){'[\r\n\t]+', ' | '}%nopex%n}
 * gives, without logback's pattern parser and converters and {@code java.time}'s formatter (about 150
 * classes loaded at start and kept for the daemon's life: ~1 MB of RSS, docs/benchmarks.md "session 8").
 * A stack trace ({@code %ex{8}}: logback's own converter, loaded on the first one) is folded onto its line.
 */
final class LineLayout extends LayoutBase<ILoggingEvent> {
    private static final Pattern FOLD = Pattern.compile("[\\r\\n\\t]+");

    private ThrowableProxyConverter exceptions;

    @Override
    public String doLayout(ILoggingEvent event) {
        StringBuilder b = new StringBuilder(128);
        timestamp(b, event.getTimeStamp(), TimeZone.getDefault());
        b.append(' ');
        String level = event.getLevel().toString();
        b.append(level);
        for (int i = level.length(); i < 5; i++) {
            b.append(' ');
        }
        b.append(" [").append(event.getThreadName()).append("] ");
        String logger = event.getLoggerName();
        b.append(logger, logger.lastIndexOf('.') + 1, logger.length()).append(": ");
        b.append(event.getFormattedMessage());
        if (event.getThrowableProxy() != null) {
            b.append(FOLD.matcher(exceptions().convert(event)).replaceAll(" | "));
        }
        return b.append(CoreConstants.LINE_SEPARATOR).toString();
    }

    /** {@code yyyy-MM-dd'T'HH:mm:ss.SSSXXX} in {@code zone}: the offset as {@code +HH:MM}, {@code Z} for UTC. */
    static void timestamp(StringBuilder b, long epochMillis, TimeZone zone) {
        int offsetSeconds = zone.getOffset(epochMillis) / 1000;
        LocalDateTime t = LocalDateTime.ofEpochSecond(Math.floorDiv(epochMillis, 1000L),
                (int) Math.floorMod(epochMillis, 1000L) * 1_000_000, ZoneOffset.ofTotalSeconds(offsetSeconds));
        pad(b, t.getYear(), 4).append('-');
        pad(b, t.getMonthValue(), 2).append('-');
        pad(b, t.getDayOfMonth(), 2).append('T');
        pad(b, t.getHour(), 2).append(':');
        pad(b, t.getMinute(), 2).append(':');
        pad(b, t.getSecond(), 2).append('.');
        pad(b, t.getNano() / 1_000_000, 3);
        if (offsetSeconds == 0) {
            b.append('Z');
            return;
        }
        int abs = Math.abs(offsetSeconds);
        b.append(offsetSeconds < 0 ? '-' : '+');
        pad(b, abs / 3600, 2).append(':');
        pad(b, abs / 60 % 60, 2);
    }

    private static StringBuilder pad(StringBuilder b, int value, int width) {
        String s = Integer.toString(value);
        for (int i = s.length(); i < width; i++) {
            b.append('0');
        }
        return b.append(s);
    }

    private synchronized ThrowableProxyConverter exceptions() {
        if (exceptions == null) {
            ThrowableProxyConverter c = new ThrowableProxyConverter();
            c.setOptionList(List.of("8"));
            c.setContext(getContext());
            c.start();
            exceptions = c;
        }
        return exceptions;
    }
}
