package org.jflannel.subnet.etcd;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import java.io.File;
import java.io.IOException;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Builds the jetcd client from the upstream flags (REFERENCE §5.1). The password never reaches a log. */
final class EtcdClients {
    private static final Logger LOG = LoggerFactory.getLogger(EtcdClients.class);

    static {
        // jetcd starts a Vert.x instance per client; Vert.x's class-path file resolving creates a
        // /tmp/vertx-cache-* directory for each, removed only on a clean close (a SIGKILLed daemon left
        // one per client and start). jetcd never reads files through Vert.x.
        if (System.getProperty("vertx.disableFileCPResolving") == null) {
            System.setProperty("vertx.disableFileCPResolving", "true");
        }
    }

    private EtcdClients() {
    }

    static Client connect(EtcdOptions o) throws IOException {
        return connect(o, false, false);
    }

    /**
     * {@code quiet}: no log lines (for the watches' own reconnections; the first connect logged them).
     * {@code failFast}: calls fail at once (gRPC {@code UNAVAILABLE}) while the channel cannot connect, instead of
     * jetcd's default wait-for-ready, which queues them until it connects or the call times out. For the watches'
     * clients (ours, session 13): they handle a failure themselves (probe, new client), so a call queued on a
     * broken channel only hides it. Calls made while the channel is still connecting wait, either way.
     */
    static Client connect(EtcdOptions o, boolean quiet, boolean failFast) throws IOException {
        ClientBuilder b = Client.builder().endpoints(o.endpoints().toArray(String[]::new)).waitForReady(!failFast);
        if (o.tls()) {
            try {
                b.sslContext(ssl -> {
                    ssl.keyManager(new File(o.certFile()), new File(o.keyFile())).protocols("TLSv1.3", "TLSv1.2");
                    if (!o.caFile().isEmpty()) {
                        ssl.trustManager(new File(o.caFile()));
                    }
                });
            } catch (SSLException | IllegalArgumentException e) {
                throw new IOException("etcd TLS setup failed certFile=" + o.certFile() + " keyFile=" + o.keyFile()
                        + " caFile=" + o.caFile() + ": " + e.getMessage(), e);
            }
        } else if (!quiet) {
            LOG.warn("no certificate provided: connecting to etcd with http. This is insecure");
        }
        if (o.auth()) {
            b.user(EtcdStore.bytes(o.username())).password(EtcdStore.bytes(o.password()));
        }
        if (!quiet) {
            LOG.info("etcd client options={}", o);
        }
        return b.build();
    }
}
