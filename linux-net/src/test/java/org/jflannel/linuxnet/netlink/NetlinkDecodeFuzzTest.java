package org.jflannel.linuxnet.netlink;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * The kernel's replies as we decode them, truncated or odd: one rtnetlink message payload (link,
 * address, route, neighbour or FDB, as a dump or as an event, or a nexthop) or a WireGuard generic
 * netlink dump. The input's first byte picks the decoder; the rest is the payload, alone in a buffer of
 * exactly its size (so reading past the message fails here as it would read the next message's bytes
 * in the daemon's receive buffer). For the dump, the rest is messages each prefixed by a 2-byte length.
 * Properties: an rtnetlink payload decodes to a value or null (a message we skip), never an exception
 * (an exception would end the monitor thread or the dump); the WireGuard dump gives the device or the
 * documented {@link IllegalArgumentException} ("malformed WG_CMD_GET_DEVICE reply: ..."), nothing else.
 */
class NetlinkDecodeFuzzTest {
    private static final int[] TYPES = {Rtnl.RTM_NEWLINK, Rtnl.RTM_DELLINK, Rtnl.RTM_NEWADDR, Rtnl.RTM_DELADDR,
        Rtnl.RTM_NEWROUTE, Rtnl.RTM_DELROUTE, Rtnl.RTM_NEWNEIGH, Rtnl.RTM_DELNEIGH};

    @FuzzTest(maxDuration = "5m")
    void rtnetlinkMessages(byte[] input) {
        if (input.length == 0) {
            return;
        }
        int pick = (input[0] & 0xff) % (TYPES.length + 1);
        ByteBuffer b = ByteBuffer.allocate(input.length - 1).order(ByteOrder.nativeOrder());
        b.put(input, 1, input.length - 1).flip();
        int len = b.limit();
        if (pick == TYPES.length) {
            NexthopCodec.decode(b, 0, len);
        } else {
            EventCodec.decode(TYPES[pick], b, 0, len);
        }
    }

    @FuzzTest(maxDuration = "5m")
    void wireguardDump(byte[] input) {
        List<ByteBuffer> messages = new ArrayList<>();
        for (int i = 0; i + 2 <= input.length && messages.size() < 16; ) {
            int n = Math.min((input[i] & 0xff) << 8 | (input[i + 1] & 0xff), input.length - i - 2);
            messages.add(ByteBuffer.wrap(input, i + 2, n).slice());
            i += 2 + n;
        }
        try {
            WireguardDeviceState d = WireguardDump.decode(messages);
            if (d == null) {
                throw new AssertionError("null device state");
            }
        } catch (IllegalArgumentException e) {
            if (!e.getMessage().startsWith("malformed WG_CMD_GET_DEVICE reply")) {
                throw e;
            }
        }
    }
}
