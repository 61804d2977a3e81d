package org.jflannel.testsupport.kube;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** Writes a minimal kubeconfig for an unauthenticated API server URL (the mock server). */
public final class KubeconfigWriter {

    private KubeconfigWriter() {
    }

    public static String render(String serverUrl) {
        return """
                apiVersion: v1
                kind: Config
                clusters:
                - name: jflannel-mock
                  cluster:
                    server: %s
                users:
                - name: jflannel-mock
                  user: {}
                contexts:
                - name: jflannel-mock
                  context:
                    cluster: jflannel-mock
                    user: jflannel-mock
                current-context: jflannel-mock
                """.formatted(serverUrl);
    }

    /** Writes atomically (temp file + rename in the same directory); returns {@code file}. */
    public static Path write(Path file, String serverUrl) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, ".kubeconfig", ".tmp");
        Files.writeString(tmp, render(serverUrl), StandardCharsets.UTF_8);
        return Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
