package org.jflannel.testsupport.kube;

import io.fabric8.mockwebserver.http.ByteString;
import io.fabric8.mockwebserver.http.Response;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;

import java.util.concurrent.Executor;

/**
 * Wraps fabric8's watch listener so that its close handling runs off the Vert.x event loop.
 *
 * <p>Why: fabric8's {@code WatchEventsListener.onClosed} shuts its send executor down and waits up to
 * a minute for it, on the event loop; a send or close still queued there needs that same loop, so a
 * client that closes a watch (an informer stopping, a daemon exiting) freezes the whole mock server
 * for a minute and makes its shutdown fail. Running the callback elsewhere lets the queued work finish.
 */
final class OffLoopCloseListener extends WebSocketListener {

    private final WebSocketListener inner;
    private final Executor closer;

    OffLoopCloseListener(WebSocketListener inner, Executor closer) {
        this.inner = inner;
        this.closer = closer;
    }

    @Override
    public void onBeforeAccept(WebSocket ws, Response response) {
        inner.onBeforeAccept(ws, response);
    }

    @Override
    public void onOpen(WebSocket ws, Response response) {
        inner.onOpen(ws, response);
    }

    @Override
    public void onMessage(WebSocket ws, String text) {
        inner.onMessage(ws, text);
    }

    @Override
    public void onMessage(WebSocket ws, ByteString bytes) {
        inner.onMessage(ws, bytes);
    }

    @Override
    public void onMessage(WebSocket ws, byte[] bytes) {
        inner.onMessage(ws, bytes);
    }

    @Override
    public void onClosing(WebSocket ws, int code, String reason) {
        inner.onClosing(ws, code, reason);
    }

    @Override
    public void onClosed(WebSocket ws, int code, String reason) {
        closer.execute(() -> inner.onClosed(ws, code, reason));
    }

    @Override
    public void onFailure(WebSocket ws, Throwable t, Response response) {
        closer.execute(() -> inner.onFailure(ws, t, response));
    }
}
