package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.jflannel.linuxnet.netns.NetNs;

/**
 * A minimal HTTP/1.0 GET from inside a network namespace: the socket is created on the namespace's
 * thread ({@link NetNs#call}), so it connects there (the harness itself sits in another namespace).
 * Enough for flanneld's {@code /healthz}, {@code /readyz} and {@code /metrics}.
 */
final class NsHttp {
    private static final int TIMEOUT_MS = 2000;
    private static final int MAX_BYTES = 4 << 20;

    /** Status code and body of one response. */
    record Response(int status, String body) {
    }

    private NsHttp() {
    }

    static Response get(NetNs ns, String host, int port, String path) throws Exception {
        return ns.call(() -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(host, port), TIMEOUT_MS);
                s.setSoTimeout(TIMEOUT_MS);
                OutputStream out = s.getOutputStream();
                out.write(("GET " + path + " HTTP/1.0\r\nHost: " + host + "\r\nConnection: close\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
                return parse(readAll(s.getInputStream()));
            }
        });
    }

    private static String readAll(InputStream in) throws IOException {
        byte[] bytes = in.readNBytes(MAX_BYTES);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static Response parse(String raw) throws IOException {
        int lineEnd = raw.indexOf("\r\n");
        String[] status = (lineEnd < 0 ? raw : raw.substring(0, lineEnd)).split(" ", 3);
        if (status.length < 2 || !status[0].startsWith("HTTP/")) {
            throw new IOException("not an HTTP response: " + raw.substring(0, Math.min(80, raw.length())));
        }
        int bodyStart = raw.indexOf("\r\n\r\n");
        return new Response(Integer.parseInt(status[1]), bodyStart < 0 ? "" : raw.substring(bodyStart + 4));
    }
}
