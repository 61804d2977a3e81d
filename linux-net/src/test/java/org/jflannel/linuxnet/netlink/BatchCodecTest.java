package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import org.jflannel.core.MacAddress;
import org.junit.jupiter.api.Test;

/** The pure side of pipelining: several requests packed in one buffer, answers matched by sequence number. */
class BatchCodecTest {
    private static final int SEQ = 0x7ffffffe; // the window crosses the int wrap-around

    @Test
    void appendedMessagesAreTheSingleRequestsBackToBack() throws Exception {
        Neighbour n = Neighbour.permanent(2, InetAddress.getByName("10.244.2.0"), MacAddress.parse("0e:00:00:00:00:02"));
        Route r = Route.onlink(IpPrefix.parse("10.244.2.0/24"), InetAddress.getByName("10.244.2.0"), 2);
        Batch.Request rn = new Batch.Request(Batch.Kind.REPLACE_NEIGHBOUR, n);
        Batch.Request rr = new Batch.Request(Batch.Kind.REPLACE_ROUTE, r);

        NlWriter packed = NlWriter.heap(1024);
        packed.buffer().clear();
        for (int i = 0; i < 2; i++) {
            Batch.Request q = i == 0 ? rn : rr;
            packed.append(q.type(), q.flags() | Rtnl.NLM_F_REQUEST, SEQ + i);
            q.encode(packed);
            packed.endMessage();
        }
        byte[] all = bytes(packed.buffer().flip());

        String one = hex(single(rn, SEQ));
        String two = hex(single(rr, SEQ + 1));
        assertThat(HexFormat.of().formatHex(all)).isEqualTo(one + two);
        assertThat(one).startsWith("30000000" + "1c00" + "0505"); // 48 bytes, RTM_NEWNEIGH, REQUEST|ACK|REPLACE|CREATE
    }

    @Test
    void answersAreMatchedBySequenceNumberWhateverTheirOrderAndPacking() {
        int[] errnos = new int[5];
        String[] messages = new String[5];
        AckCollector acks = new AckCollector(SEQ, 3, errnos, messages, 2);

        NlWriter w = NlWriter.heap(4096);
        w.buffer().clear();
        answer(w, SEQ + 2, 0, null);
        answer(w, SEQ - 1, 17, "not ours");           // another window's sequence number
        answer(w, SEQ, 22, "Nexthop has invalid gateway");
        ByteBuffer first = w.buffer().flip();
        assertThat(acks.accept(first, first.limit())).isEqualTo(1);

        w.buffer().clear();
        answer(w, SEQ, 0, null);                       // a repeated answer does not overwrite the first
        answer(w, SEQ + 1, 0, null);
        ByteBuffer second = w.buffer().flip();
        assertThat(acks.accept(second, second.limit())).isZero();

        assertThat(errnos).containsExactly(0, 0, 22, 0, 0);
        assertThat(messages[2]).isEqualTo("Nexthop has invalid gateway");
        assertThat(messages[3]).isEmpty();
        assertThat(messages[4]).isEmpty();
    }

    @Test
    void aTruncatedMessageEndsTheScan() {
        int[] errnos = new int[1];
        AckCollector acks = new AckCollector(SEQ, 1, errnos, new String[1], 0);
        NlWriter w = NlWriter.heap(256);
        w.buffer().clear();
        answer(w, SEQ, 0, null);
        ByteBuffer b = w.buffer().flip();
        assertThat(acks.accept(b, b.limit() - 4)).isEqualTo(1);
        assertThat(acks.accept(b, b.limit())).isZero();
    }

    /** An NLMSG_ERROR as the kernel sends it with extended acks: error, echoed header (capped), NLMSGERR_ATTR_MSG. */
    private static void answer(NlWriter w, int seq, int errno, String msg) {
        int flags = msg == null ? 0 : Rtnl.NLM_F_CAPPED | Rtnl.NLM_F_ACK_TLVS;
        w.append(Rtnl.NLMSG_ERROR, flags, seq).u32(-errno);
        w.u32(48).u16(Rtnl.RTM_NEWNEIGH).u16(0x505).u32(seq).u32(0);
        if (msg != null) {
            w.attrString(Rtnl.NLMSGERR_ATTR_MSG, msg);
        }
        w.endMessage();
    }

    private static byte[] single(Batch.Request q, int seq) {
        NlWriter w = NlWriter.heap(1024);
        w.begin(q.type(), q.flags() | Rtnl.NLM_F_REQUEST, seq);
        q.encode(w);
        return w.finishBytes();
    }

    private static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }
}
