package org.jflannel.backend.udp;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.DatagramPacket;
import java.net.Inet4Address;
import java.nio.ByteBuffer;
import org.jflannel.backend.udp.UdpCounters.Drop;
import org.jflannel.core.Ip4Net;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.TunDevice;

/**
 * UDP → TUN, on the socket's event loop: each datagram is one inner IP packet; after the
 * {@link PacketPath#inbound} checks it is copied into one reused direct buffer and written to the
 * TUN (behind a zero virtio_net_hdr when offloads are on: the kernel verifies the checksums). Socket errors are counted and never close the channel.
 */
@ChannelHandler.Sharable
final class TunWriter extends SimpleChannelInboundHandler<DatagramPacket> {
    static final int MAX_PACKET = 65535;

    private final TunDevice tun;
    private final PacketPath path;
    private final int hdr;
    /** What write() sends: [virtio_net_hdr, all zero: a plain packet, when offloading][IP packet]; {@link #buffer} views the packet. */
    private final ByteBuffer raw = ByteBuffer.allocateDirect(VnetHdr.LENGTH + MAX_PACKET);
    private final ByteBuffer buffer;
    /** Merges a flow's segments into GSO writes; null without offloads. */
    private final TcpCoalescer coalescer;

    /** @param vnetHdr the TUN was opened with IFF_VNET_HDR: every write starts with a virtio_net_hdr */
    TunWriter(TunDevice tun, boolean vnetHdr, PacketPath path) {
        this.tun = tun;
        this.path = path;
        this.hdr = vnetHdr ? VnetHdr.LENGTH : 0;
        this.buffer = raw.slice(hdr, raw.capacity() - hdr);
        this.coalescer = vnetHdr ? new TcpCoalescer() : null;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket msg) {
        if (!(msg.sender().getAddress() instanceof Inet4Address from)) {
            path.drop(Drop.UNKNOWN_PEER, "datagram dropped reason=not-ipv4-sender from={}", msg.sender());
            return;
        }
        int len = Math.min(msg.content().readableBytes(), MAX_PACKET);
        buffer.clear();
        msg.content().getBytes(msg.content().readerIndex(), buffer.limit(len));
        buffer.clear().limit(len);
        if (!path.inbound(buffer, Ip4Net.fromInet(from))) {
            return;
        }
        buffer.limit(Ipv4.totalLength(buffer)); // trailing bytes after the IP packet (if any) stay out
        path.counters().received(len);
        if (coalescer != null) {
            if (coalescer.offer(buffer)) {
                return;
            }
            flushCoalesced(); // order: what was merged so far goes first
            if (coalescer.offer(buffer)) {
                return;
            }
        }
        raw.clear().limit(hdr + buffer.limit());
        write(raw);
    }

    /** End of a read batch: what is merged goes to the TUN now. */
    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        flushCoalesced();
        ctx.fireChannelReadComplete();
    }

    private void flushCoalesced() {
        if (coalescer != null && coalescer.pending()) {
            write(coalescer.take());
        }
    }

    private void write(ByteBuffer b) {
        try {
            tun.write(b);
        } catch (NetlinkException e) {
            path.drop(Drop.TUN_WRITE_FAILED, "packet to tun dropped reason=write-failed error={}", e.getMessage());
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        path.drop(Drop.SEND_FAILED, "udp socket error error={}", cause.toString());
    }
}
