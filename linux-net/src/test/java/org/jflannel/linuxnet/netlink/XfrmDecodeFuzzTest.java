package org.jflannel.linuxnet.netlink;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * One part of the kernel's XFRM_MSG_GETPOLICY dump (an XFRM_MSG_NEWPOLICY payload after its nlmsghdr),
 * as {@link XfrmNetlink#policies()} hands it to {@link XfrmCodec#decode}. The input's first byte (low 4
 * bits) is how far into the receive buffer the message starts (filler before it, as a dump's later
 * messages sit); the rest is the payload, ending the buffer (reading past it fails here as it would read
 * the next message in the daemon). Properties (docs/ipsec.md, "What exists": socket policies, unknown
 * families and short replies skipped, never thrown): never an exception; null for a payload shorter than
 * {@code xfrm_userpolicy_info}, a family other than AF_INET / AF_INET6 or a direction beyond FWD (the
 * kernel reports socket policies as XFRM_POLICY_MAX + dir); a decoded policy is IN / OUT / FWD, one
 * family on both sides, and encodes ({@link XfrmCodec#policy}) and decodes back equal.
 */
class XfrmDecodeFuzzTest {

    @FuzzTest(maxDuration = "5m")
    void policyDump(byte[] input) {
        if (input.length == 0) {
            return;
        }
        int at = input[0] & 0x0f;
        int len = input.length - 1;
        ByteBuffer b = ByteBuffer.allocate(at + len).order(ByteOrder.nativeOrder());
        for (int i = 0; i < at; i++) {
            b.put((byte) 0xa5);
        }
        b.put(input, 1, len).flip();
        XfrmPolicy p = XfrmCodec.decode(XfrmCodec.XFRM_MSG_NEWPOLICY, b, at, len);
        if (len < XfrmCodec.POLICY_INFO_SIZE) {
            expectSkipped(p, "a reply shorter than xfrm_userpolicy_info");
            return;
        }
        int family = b.getShort(at + 40) & 0xffff;
        int dir = b.get(at + 160) & 0xff;
        if (family != XfrmCodec.AF_INET && family != XfrmCodec.AF_INET6) {
            expectSkipped(p, "family " + family);
        }
        if (dir > XfrmPolicy.Dir.FWD.ordinal()) {
            expectSkipped(p, "direction " + dir + " (a socket policy or beyond)");
        }
        if (XfrmCodec.decode(XfrmCodec.XFRM_MSG_DELPOLICY, b, at, len) != null) {
            throw new AssertionError("a message of another type decoded as a policy");
        }
        if (p == null) {
            return;
        }
        if (p.src().isIpv4() != (family == XfrmCodec.AF_INET) || p.dst().isIpv4() != p.src().isIpv4()) {
            throw new AssertionError("family " + family + " decoded as " + p.describe());
        }
        if (p.tmpls().size() > (len - XfrmCodec.POLICY_INFO_SIZE) / XfrmCodec.TMPL_SIZE) {
            throw new AssertionError(p.tmpls().size() + " templates from " + len + " bytes");
        }
        if (p.tmpls().size() > 1000) {
            return; // beyond one attribute's 16-bit length: not a policy the encoder (or the kernel) can write
        }
        NlWriter w = NlWriter.heap(len + 256).begin(XfrmCodec.XFRM_MSG_NEWPOLICY, 0, 1);
        XfrmCodec.policy(w, p);
        byte[] again = w.finishBytes();
        ByteBuffer body = ByteBuffer.wrap(Arrays.copyOfRange(again, 16, again.length)).order(ByteOrder.nativeOrder());
        XfrmPolicy back = XfrmCodec.decode(XfrmCodec.XFRM_MSG_NEWPOLICY, body, 0, body.limit());
        if (!p.equals(back)) {
            throw new AssertionError("round trip: " + p + " came back as " + back);
        }
    }

    private static void expectSkipped(XfrmPolicy p, String why) {
        if (p != null) {
            throw new AssertionError(why + " decoded as " + p.describe() + " instead of being skipped");
        }
    }
}
