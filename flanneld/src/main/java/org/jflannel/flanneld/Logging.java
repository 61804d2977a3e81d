package org.jflannel.flanneld;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import org.slf4j.LoggerFactory;

/**
 * Maps {@code -v} onto logback levels (REFERENCE §9.2): 0 → INFO, 1–4 → DEBUG for our code (data-path
 * messages), 5+ → TRACE. Libraries (fabric8, Netty, gRPC, Vert.x) stay at WARN unless {@code -v} ≥ 5.
 * The appender (stderr, one line per event) is in {@code logback.xml}.
 */
final class Logging {
    private static final String[] LIBRARIES = {"io.fabric8", "io.netty", "io.grpc", "io.vertx", "io.etcd", "okhttp3"};

    private Logging() {
    }

    static void configure(int verbosity) {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
            return; // another slf4j binding (tests): leave it alone
        }
        Level ours = verbosity >= 5 ? Level.TRACE : verbosity >= 1 ? Level.DEBUG : Level.INFO;
        context.getLogger("org.jflannel").setLevel(ours);
        for (String lib : LIBRARIES) {
            context.getLogger(lib).setLevel(verbosity >= 5 ? Level.DEBUG : Level.WARN);
        }
    }
}
