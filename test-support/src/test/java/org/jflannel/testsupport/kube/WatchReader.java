package org.jflannel.testsupport.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A plain HTTP/1.1 watch client, as client-go reads a watch: one GET, then one JSON event per line
 * until the server ends the chunked body. Lines are read on a daemon thread into a queue, so a test
 * waits for each with a bound.
 */
final class WatchReader implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String END = "\u0000end";

    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    private final HttpResponse<InputStream> response;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    private WatchReader(HttpResponse<InputStream> response) {
        this.response = response;
    }

    static WatchReader open(String url) throws IOException, InterruptedException {
        HttpResponse<InputStream> r = HTTP.send(HttpRequest.newBuilder(URI.create(url)).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        WatchReader reader = new WatchReader(r);
        Thread t = new Thread(reader::pump, "test-watch-reader");
        t.setDaemon(true);
        t.start();
        return reader;
    }

    int status() {
        return response.statusCode();
    }

    String header(String name) {
        return response.headers().firstValue(name).orElse(null);
    }

    /** The next event, or an AssertionError after {@code within}. */
    JsonNode next(Duration within) throws Exception {
        String line = lines.poll(within.toMillis(), TimeUnit.MILLISECONDS);
        if (line == null) {
            throw new AssertionError("no watch event within " + within);
        }
        if (line.equals(END)) {
            throw new AssertionError("the watch ended instead");
        }
        return JSON.readTree(line);
    }

    /** True when the server ended the stream within {@code within} and sent nothing more. */
    boolean endsWithin(Duration within) throws InterruptedException {
        String line = lines.poll(within.toMillis(), TimeUnit.MILLISECONDS);
        if (line != null && !line.equals(END)) {
            throw new AssertionError("expected the end, got " + line);
        }
        return line != null;
    }

    private void pump() {
        try (InputStream in = response.body();
             BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String l = r.readLine(); l != null; l = r.readLine()) {
                lines.add(l);
            }
        } catch (IOException closed) {
            // the test closed the connection, or the server went away
        }
        lines.add(END);
    }

    @Override
    public void close() throws IOException {
        response.body().close(); // cancels the exchange: the connection is dropped, as a client going away
    }
}
