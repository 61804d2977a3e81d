package org.jflannel.linuxnet.netlink;

import static org.jflannel.linuxnet.netlink.Rtnl.*;

import java.nio.ByteBuffer;

/** Reads an NLMSG_ERROR message: struct nlmsgerr, then (with NLM_F_ACK_TLVS) the extended-ack attributes. */
final class NlErrors {
    private NlErrors() {
    }

    /** The positive errno of the NLMSG_ERROR message at {@code at} (0 = ACK). */
    static int errno(ByteBuffer b, int at) {
        return -b.getInt(at + NlWriter.HDRLEN);
    }

    /**
     * NLMSGERR_ATTR_MSG, or "". The echoed request is the full message unless NLM_F_CAPPED says only
     * its header was copied (NETLINK_CAP_ACK).
     */
    static String kernelMessage(ByteBuffer b, int at, int len, int flags) {
        if ((flags & NLM_F_ACK_TLVS) == 0) {
            return "";
        }
        int p = at + NlWriter.HDRLEN;
        int origLen = b.getInt(p + 4);
        int tlvAt = p + 4 + ((flags & NLM_F_CAPPED) != 0 ? NlWriter.HDRLEN : ((origLen + 3) & ~3));
        if (tlvAt > at + len) {
            return "";
        }
        String msg = NlAttrs.parse(b, tlvAt, at + len).string(NLMSGERR_ATTR_MSG);
        return msg == null ? "" : msg;
    }
}
