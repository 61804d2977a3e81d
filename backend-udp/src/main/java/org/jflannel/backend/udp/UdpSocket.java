package org.jflannel.backend.udp;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.SegmentedDatagramPacket;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.socket.SocketProtocolFamily;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The backend's UDP socket on Netty's epoll transport, one event-loop thread ({@code udp-socket-*}).
 * The socket is created by the thread that calls {@link #bind}, so it lives in that thread's network
 * namespace. Inbound datagrams go to the {@link TunWriter}; {@link #send} may be called from any thread.
 */
final class UdpSocket implements AutoCloseable {
    private static final int SOCKET_BUFFER = 4 << 20;

    /** UDP GSO limits: at most this many segments and bytes per sendmsg. */
    private static final int GSO_SEGMENTS = 64;
    private static final int GSO_BYTES = 60_000;
    /** Datagrams read per recvmmsg. */
    private static final int READ_BATCH = 64;
    /** Room per datagram when reading: jumbo frames of peers with a larger MTU than ours still fit. */
    private static final int MIN_DATAGRAM_ROOM = 9000;

    private final EventLoopGroup group;
    private final Channel channel;
    private final Outbox outbox;

    private UdpSocket(EventLoopGroup group, Channel channel) {
        this.group = group;
        this.channel = channel;
        this.outbox = new Outbox(channel);
    }

    /** Binds {@code local}; datagrams up to {@code maxPacket} bytes (the external MTU) are read in batches. */
    static UdpSocket bind(InetSocketAddress local, int maxPacket, TunWriter inbound) throws IOException, InterruptedException {
        if (!Epoll.isAvailable()) {
            throw new IOException("udp backend: Netty epoll transport unavailable: " + Epoll.unavailabilityCause());
        }
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("udp-socket", true),
                EpollIoHandler.newFactory());
        try {
            Channel ch = new Bootstrap().group(group)
                    .channelFactory(() -> new EpollDatagramChannel(SocketProtocolFamily.INET)) // IPv4 only, as upstream
                    // a buffer for READ_BATCH datagrams and a per-datagram size: Netty then reads with recvmmsg
                    .option(EpollChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE, room(maxPacket))
                    .option(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(room(maxPacket) * READ_BATCH))
                    .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(256 << 10, 1 << 20))
                    .option(ChannelOption.SO_RCVBUF, SOCKET_BUFFER)
                    .option(ChannelOption.SO_SNDBUF, SOCKET_BUFFER)
                    .handler(inbound)
                    .bind(local).sync().channel();
            return new UdpSocket(group, ch);
        } catch (Exception e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            if (e instanceof InterruptedException ie) {
                throw ie;
            }
            throw new IOException("udp backend: bind " + local.getAddress().getHostAddress() + ":" + local.getPort()
                    + ": " + e.getMessage(), e);
        }
    }

    private static int room(int maxPacket) {
        return Math.min(Math.max(maxPacket, MIN_DATAGRAM_ROOM), TunWriter.MAX_PACKET);
    }

    /** Queues the packet between position and limit for {@code to}; false when there was no room (drop). */
    boolean send(ByteBuffer packet, InetSocketAddress to) {
        ByteBuf buf = channel.alloc().directBuffer(packet.remaining());
        buf.writeBytes(packet.duplicate());
        return outbox.offer(new DatagramPacket(buf, to));
    }

    /**
     * Queues {@code segments} (back-to-back IP packets of {@code segmentLength} bytes, the last may be
     * shorter) for {@code to}: with UDP GSO one datagram per {@link #GSO_BYTES} (the kernel cuts it),
     * else one datagram per packet.
     */
    boolean sendSegments(ByteBuffer segments, int segmentLength, InetSocketAddress to) {
        int total = segments.remaining();
        ByteBuf all = channel.alloc().directBuffer(total);
        all.writeBytes(segments.duplicate());
        boolean gso = SegmentedDatagramPacket.isSupported();
        int step = gso ? Math.max(1, Math.min(GSO_SEGMENTS, GSO_BYTES / segmentLength)) * segmentLength : segmentLength;
        boolean ok = true;
        while (all.isReadable()) {
            ByteBuf part = all.readRetainedSlice(Math.min(step, all.readableBytes()));
            ok &= outbox.offer(gso && part.readableBytes() > segmentLength
                    ? new SegmentedDatagramPacket(part, segmentLength, to) : new DatagramPacket(part, to));
        }
        all.release();
        return ok;
    }

    InetSocketAddress localAddress() {
        return (InetSocketAddress) channel.localAddress();
    }

    @Override
    public void close() {
        channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        outbox.discard();
    }
}
