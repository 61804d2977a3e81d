package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.DatagramPacket;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class OutboxTest {
    private static final InetSocketAddress PEER = new InetSocketAddress("192.0.2.2", 8285);

    @Test
    void aBurstIsWrittenInOrderByOneDrain() {
        EmbeddedChannel ch = new EmbeddedChannel();
        Outbox box = new Outbox(ch);
        for (int i = 0; i < 200; i++) {
            assertThat(box.offer(packet(i))).isTrue();
        }
        assertThat(ch.outboundMessages()).as("nothing written before the event loop runs").isEmpty();

        ch.runPendingTasks();

        List<Integer> order = new ArrayList<>();
        for (Object m; (m = ch.readOutbound()) != null; ) {
            DatagramPacket p = (DatagramPacket) m;
            order.add(p.content().readInt());
            assertThat(p.recipient()).isEqualTo(PEER);
            p.release();
        }
        assertThat(order).hasSize(200).isSorted();
        ch.finishAndReleaseAll();
    }

    @Test
    void aFullOutboxRefusesAfterABoundedWaitAndReleasesThePacket() {
        EmbeddedChannel ch = new EmbeddedChannel();
        Outbox box = new Outbox(ch);
        for (int i = 0; i < Outbox.LIMIT; i++) {
            assertThat(box.offer(packet(i))).isTrue();
        }
        DatagramPacket extra = packet(-1);

        assertThat(box.offer(extra)).isFalse();
        assertThat(extra.refCnt()).isZero();

        ch.runPendingTasks(); // draining makes room again
        assertThat(box.offer(packet(Outbox.LIMIT))).isTrue();
        ch.finishAndReleaseAll();
    }

    @Test
    void discardReleasesWhatIsStillQueued() {
        EmbeddedChannel ch = new EmbeddedChannel();
        Outbox box = new Outbox(ch);
        DatagramPacket queued = packet(1);
        box.offer(queued);

        box.discard();

        assertThat(queued.refCnt()).isZero();
        ch.runPendingTasks();
        assertThat(ch.outboundMessages()).isEmpty();
        ch.finishAndReleaseAll();
    }

    private static DatagramPacket packet(int n) {
        return new DatagramPacket(Unpooled.directBuffer(4).writeInt(n), PEER);
    }
}
