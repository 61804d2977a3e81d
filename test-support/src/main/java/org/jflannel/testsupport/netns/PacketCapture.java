package org.jflannel.testsupport.netns;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jflannel.testsupport.cluster.Wait;

/**
 * A failure witness: {@code tcpdump -i any} inside one node's namespace (our child, bounded by
 * {@code timeout}, at most {@link #MAX_PACKETS} packets), its text read back by {@link #stop()}.
 * For tests whose failure would otherwise leave no trace of which packets crossed (who answered
 * a connect that should have failed). {@link #close()} ends the capture and deletes its log.
 */
public final class PacketCapture implements AutoCloseable {
    static final int MAX_PACKETS = 200;
    private static final Duration READY = Duration.ofSeconds(20);

    private final Process dump;
    private final Path log;

    private PacketCapture(Process dump, Path log) {
        this.dump = dump;
        this.log = log;
    }

    /** Starts capturing {@code filter} (a pcap expression) on every device of {@code node}; returns once it listens. */
    public static PacketCapture start(NodeNamespace node, String filter) throws Exception {
        Path log = Files.createTempFile("capture-" + node.name(), ".log");
        Process dump = new ProcessBuilder("ip", "netns", "exec", node.name(), "timeout", "120", "tcpdump", "-i", "any",
                "-nn", "-l", "--immediate-mode", "-c", String.valueOf(MAX_PACKETS), filter)
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        PacketCapture capture = new PacketCapture(dump, log);
        try {
            Wait.until("tcpdump listening in " + node.name(), READY, () -> Files.readString(log).contains("listening on")
                    || !dump.isAlive());
            if (!dump.isAlive()) {
                throw new IOException("tcpdump in " + node.name() + " ended at once: " + Files.readString(log).strip());
            }
        } catch (Exception e) {
            capture.close();
            throw e;
        }
        return capture;
    }

    /** Ends the capture (letting it print what it has) and returns its text. */
    public String stop() throws IOException, InterruptedException {
        if (dump.isAlive()) {
            Thread.sleep(200); // --immediate-mode: a packet just seen is printed within this
            dump.destroy();
            dump.waitFor(10, TimeUnit.SECONDS);
        }
        return Files.readString(log);
    }

    @Override
    public void close() throws IOException {
        dump.destroy();
        try {
            if (!dump.waitFor(10, TimeUnit.SECONDS)) {
                dump.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Files.deleteIfExists(log);
    }
}
