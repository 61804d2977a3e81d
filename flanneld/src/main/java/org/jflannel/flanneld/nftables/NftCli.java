package org.jflannel.flanneld.nftables;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.flanneld.exec.BoundedProcess;

/**
 * Runs {@code nft -f -} (one atomic transaction) and {@code nft --check -f -} (the kernel validates
 * the transaction and aborts it) with a payload on stdin, as upstream's knftables library does.
 * {@code commandPrefix} is empty in the daemon; tests put {@code ip netns exec <ns>} there.
 */
public final class NftCli {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

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
        BoundedProcess.Result r;
        try {
            r = BoundedProcess.run(full, payload, TIMEOUT);
        } catch (BoundedProcess.NotStartedException e) {
            throw new MissingBinaryException("could not find nftables binary: " + e.getMessage(), e.getCause());
        }
        if (r.status() != 0) {
            throw new IOException(String.join(" ", cmd) + ": exit " + r.status() + ": " + r.output().trim().replace('\n', '|'));
        }
    }
}
