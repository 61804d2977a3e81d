package org.jflannel.backend.ipsec.vici;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * What charon's VICI socket sends, as we decode it. {@link #packetsFromCharon}: one packet without its
 * length prefix, as {@code ViciClient} hands it to {@link ViciCodec#decode}: a packet, or a
 * {@link ViciException} saying where ("vici: ... at offset N", "vici message: duplicate key ... at offset
 * N", "... at the end of the packet", "unknown packet type N"), never another exception (sections nest at most {@link ViciCodec#MAX_DEPTH}, so no
 * stack overflow); a decoded packet the encoder can write (names 1..255 bytes) encodes and decodes back
 * equal. {@link #clientAgainstAHostileSocket}: the input is the whole byte stream from charon's side of a
 * real Unix socket (length prefixes included, then end of stream); the first byte picks the command
 * {@link ViciClient} runs (streamed ones register, collect events and unregister): a result, or a
 * {@link ViciException}, nothing else, and no wait (the stream ends, so a short one fails at once).
 */
class ViciFuzzTest {
    private static final Path SOCKET;
    private static final ServerSocketChannel CHARON;

    static {
        try {
            Path dir = Files.createTempDirectory("vici-fuzz");
            SOCKET = dir.resolve("charon.vici");
            CHARON = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            CHARON.bind(UnixDomainSocketAddress.of(SOCKET));
            dir.toFile().deleteOnExit();
            SOCKET.toFile().deleteOnExit();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @FuzzTest(maxDuration = "5m")
    void packetsFromCharon(byte[] input) throws Exception {
        ViciCodec.Packet p;
        try {
            p = ViciCodec.decode(input);
        } catch (ViciException e) {
            String m = e.getMessage();
            if (!m.startsWith("vici") || !(m.contains(" at offset ") || m.endsWith(" at the end of the packet")
                    || m.startsWith("vici: unknown packet type "))) {
                throw new AssertionError("a rejection that does not say where: " + m, e);
            }
            return;
        }
        byte[] again;
        try {
            again = ViciCodec.encode(p.type(), p.name(), p.message());
        } catch (IllegalArgumentException notWritable) { // an empty or over-long name (after UTF-8 repair): the encoder's refusal
            return;
        }
        ViciCodec.Packet back = ViciCodec.decode(Arrays.copyOfRange(again, 4, again.length));
        if (!back.equals(p)) {
            throw new AssertionError("round trip: " + p + " came back as " + back);
        }
    }

    @FuzzTest(maxDuration = "5m")
    void clientAgainstAHostileSocket(byte[] input) throws Exception {
        if (input.length == 0) {
            return;
        }
        try (ViciClient client = ViciClient.connect(SOCKET, Duration.ofSeconds(5));
             SocketChannel charon = CHARON.accept()) {
            charon.write(ByteBuffer.wrap(input, 1, input.length - 1)); // blocking: the inputs fit the socket's buffer
            charon.shutdownOutput();
            try {
                run(client, input[0] & 0xff);
            } catch (ViciException expected) {
                // the documented rejection: malformed, unexpected, closed, success=no
            }
        }
    }

    private static void run(ViciClient client, int command) throws IOException {
        switch (command % 8) {
            case 0 -> client.version();
            case 1 -> {
                List<String> names = client.listConns();
                if (names.contains(null)) {
                    throw new AssertionError("a null connection name: " + names);
                }
            }
            case 2 -> client.listSas().forEach(m -> {
                if (m == null) {
                    throw new AssertionError("a null list-sa event");
                }
            });
            case 3 -> client.terminateIke("192.0.2.1-10.244.1.0/24-10.244.2.0/24-192.0.2.2");
            case 4 -> client.loadConn("192.0.2.1-10.244.1.0/24-10.244.2.0/24-192.0.2.2", ViciMessage.builder()
                    .put("version", "2").put("local_addrs", List.of("192.0.2.1")).build());
            case 5 -> client.unloadConn("192.0.2.1-10.244.1.0/24-10.244.2.0/24-192.0.2.2");
            case 6 -> client.loadSharedIke("p".repeat(96), List.of("192.0.2.2"));
            default -> client.request("no-such-command", ViciMessage.EMPTY);
        }
    }
}
