package org.jflannel.testsupport.kube;

/**
 * Where one watch's events go: a chunked HTTP response (what client-go and kubectl read) or a
 * WebSocket (what fabric8 opens first). Called from the watch pump thread only.
 */
interface WatchSink {

    /** Sends one event, a JSON object on one line. */
    void send(String event);

    /** Ends the stream normally (the client sees the watch close and re-watches). */
    void end();

    /** False once the client went away or {@link #end()} was called. */
    boolean open();
}
