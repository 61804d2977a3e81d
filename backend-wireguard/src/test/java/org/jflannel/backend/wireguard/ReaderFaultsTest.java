package org.jflannel.backend.wireguard;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A reader that meets a thousand faulty packets logs one line for them, not a thousand, and goes on counting. */
class ReaderFaultsTest {

    @Test
    void firstFaultWithItsStackThenOneLinePerInterval() {
        Logger log = (Logger) LoggerFactory.getLogger("reader-faults-test-" + System.nanoTime());
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        log.addAppender(lines);
        ReaderFaults f = new ReaderFaults(log, "socket dev=flannel-wg");
        for (int i = 0; i < 1000; i++) {
            f.threw(new IllegalStateException("packet " + i));
        }
        assertThat(f.faults()).isEqualTo(1000);
        assertThat(lines.list).hasSize(1); // the rest fall in the first interval
        assertThat(lines.list.get(0).getFormattedMessage()).contains("socket dev=flannel-wg", "packet 0", "goes on");
        assertThat(lines.list.get(0).getThrowableProxy()).isNotNull();
    }
}
