package org.jflannel.backend.ipsec.vici;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ViciClient}'s reading of packets, against a real Unix socket whose other end plays charon. */
class ViciClientTest {
    @TempDir
    Path dir;

    @Test
    void aPacketLargerThanTheFirstReadArrivesWholeInPieces() throws Exception {
        ViciMessage.Builder big = ViciMessage.builder();
        for (int i = 0; i < 5; i++) {
            big.put("k" + i, String.valueOf((char) ('a' + i)).repeat(30_000));
        }
        ViciMessage answer = big.build();
        byte[] packet = ViciCodec.encode(ViciCodec.CMD_RESPONSE, null, answer); // its length prefix included
        assertThat(packet.length).as("several times the first read").isGreaterThan(100_000);
        Path sock = dir.resolve("charon.vici");
        try (ServerSocketChannel charon = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            charon.bind(UnixDomainSocketAddress.of(sock));
            Thread side = new Thread(() -> {
                try (SocketChannel c = charon.accept()) {
                    ByteBuffer len = ByteBuffer.allocate(4);
                    while (len.hasRemaining()) {
                        c.read(len);
                    }
                    ByteBuffer request = ByteBuffer.allocate(len.getInt(0));
                    while (request.hasRemaining()) {
                        c.read(request);
                    }
                    ByteBuffer out = ByteBuffer.wrap(packet);
                    while (out.hasRemaining()) { // in pieces of 7,000 bytes: the client's buffer grows as they come
                        ByteBuffer piece = out.slice(out.position(), Math.min(7_000, out.remaining()));
                        out.position(out.position() + piece.remaining());
                        while (piece.hasRemaining()) {
                            c.write(piece);
                        }
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, "fake-charon");
            side.start();
            try (ViciClient client = ViciClient.connect(sock, Duration.ofSeconds(30))) {
                assertThat(client.version()).isEqualTo(answer);
            }
            side.join(30_000);
        }
    }

    @Test
    void aStatedLengthBeyondCharonsLimitIsRefusedBeforeAnyBody() throws Exception {
        Path sock = dir.resolve("charon.vici");
        try (ServerSocketChannel charon = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            charon.bind(UnixDomainSocketAddress.of(sock));
            try (ViciClient client = ViciClient.connect(sock, Duration.ofSeconds(30));
                 SocketChannel c = charon.accept()) {
                c.write(ByteBuffer.allocate(4).putInt(ViciCodec.MAX_PACKET + 1).flip());
                assertThatThrownBy(client::version).isInstanceOf(ViciException.class)
                        .hasMessageContaining("packet length " + (ViciCodec.MAX_PACKET + 1) + " outside 1..");
            }
        }
        assertThat(Files.exists(sock)).isTrue();
    }
}
