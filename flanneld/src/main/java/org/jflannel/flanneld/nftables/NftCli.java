package org.jflannel.flanneld.nftables;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code nft -f -} (one atomic transaction) and {@code nft --check -f -} (the kernel validates
 * the transaction and aborts it) with a payload on stdin, as upstream's knftables library does.
 * {@code commandPrefix} is empty in the daemon; tests put {@code ip netns exec <ns>} there.
 */
public final class NftCli {
    private static final long TIMEOUT_SECONDS = 30;

    /** {@code nft} was not found or could not be started. */
    public static final class MissingBinaryException extends IOException {
        private static final long serialVersionUID = 1L;

        MissingBinaryException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final List<String> commandPrefix;

    public NftCli(List<String> commandPrefix) {
        this.commandPrefix = List.copyOf(commandPrefix);
    }

    /** Applies the payload as one transaction; throws with nft's own error text on failure. */
    public void run(String payload) throws IOException, InterruptedException {
        exec(List.of("nft", "-f", "-"), payload);
    }

    /** Checks the payload without committing anything. */
    public void check(String payload) throws IOException, InterruptedException {
        exec(List.of("nft", "--check", "-f", "-"), payload);
    }

    private void exec(List<String> cmd, String payload) throws IOException, InterruptedException {
        List<String> full = new ArrayList<>(commandPrefix);
        full.addAll(cmd);
        // output goes to a file so that a hung process cannot block us beyond the timeout
        Path output = Files.createTempFile("flanneld-nft", ".out");
        try {
            Process p;
            try {
                p = new ProcessBuilder(full).redirectErrorStream(true).redirectOutput(output.toFile()).start();
            } catch (IOException e) {
                throw new MissingBinaryException("could not find nftables binary: " + e.getMessage(), e);
            }
            try (OutputStream in = p.getOutputStream()) {
                in.write(payload.getBytes(StandardCharsets.UTF_8));
            }
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + ": no exit within " + TIMEOUT_SECONDS + " s");
            }
            if (p.exitValue() != 0) {
                String out = Files.readString(output, StandardCharsets.UTF_8).trim().replace('\n', '|');
                throw new IOException(String.join(" ", cmd) + ": exit " + p.exitValue() + ": " + out);
            }
        } finally {
            Files.deleteIfExists(output);
        }
    }
}
