package org.jflannel.cni;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * Which way the tests run the plugin: {@code -Djflannel.cni.mode=fast} runs every PluginHarness and
 * CniNode call through the real launcher ({@link TestLauncher}) against a {@link CniServer} in this
 * JVM (the daemon's side); the default runs {@link FlannelPlugin} in-process (the plugin's own JVM).
 */
final class FastPathFixture {

    static final boolean FAST = "fast".equals(System.getProperty("jflannel.cni.mode"));
    private static CniServer server;

    private FastPathFixture() {
    }

    static synchronized CniServer server() {
        if (server == null) {
            try {
                Path sock = Path.of("target", "cni-" + ProcessHandle.current().pid() + ".sock").toAbsolutePath();
                server = CniServer.start(sock, p -> true, 64);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return server;
    }

    static Path socket() {
        server();
        return Path.of("target", "cni-" + ProcessHandle.current().pid() + ".sock").toAbsolutePath();
    }

    /** {@code env} plus the socket of this JVM's server. */
    static Map<String, String> withSocket(Map<String, String> env) {
        Map<String, String> e = new HashMap<>(env);
        e.put("JFLANNEL_CNI_SOCKET", socket().toString());
        return e;
    }

    static PluginHarness.Outcome run(Map<String, String> env, String stdin) {
        return TestLauncher.shared().run(withSocket(env), stdin.getBytes(StandardCharsets.UTF_8));
    }
}
