package org.jflannel.linuxnet.netlink;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.internal.Errno;
import org.jflannel.linuxnet.internal.LibC;
import org.jflannel.linuxnet.internal.NetlinkSocket;

/**
 * The kernel's IPsec policy database (SPD) over NETLINK_XFRM: replace, delete and dump XFRM policies
 * ({@link XfrmCodec}'s encoding), one request at a time with NLM_F_ACK, each failure a
 * {@link NetlinkException} naming the policy. It works without the ESP module (policies are plain
 * SPD entries; only SAs need esp4). Bound to the network namespace of the thread that opens it.
 * Thread-safe: requests are serialised on this object.
 */
public final class XfrmNetlink implements AutoCloseable {
    private final NlChannel channel;
    private final AtomicBoolean closed = new AtomicBoolean();

    private XfrmNetlink(NlChannel channel) {
        this.channel = channel;
    }

    public static XfrmNetlink open() throws NetlinkException {
        return new XfrmNetlink(new NlChannel(NetlinkSocket.open(LibC.NETLINK_XFRM, 0, 256 * 1024, false)));
    }

    /**
     * Creates the policy or replaces the one with the same selector and direction
     * (XFRM_MSG_UPDPOLICY): the end state upstream reaches with its get, then add or update.
     */
    public synchronized void replacePolicy(XfrmPolicy p) throws NetlinkException {
        XfrmCodec.policy(channel.request(XfrmCodec.XFRM_MSG_UPDPOLICY, Rtnl.NLM_F_ACK), p);
        int errno = channel.execute();
        if (errno != 0) {
            throw new NetlinkException("XFRM_MSG_UPDPOLICY", describe(p), errno, channel.lastKernelMessage());
        }
    }

    /** Deletes the policy with this selector and direction; quiet (false) when there is none. */
    public synchronized boolean deletePolicy(XfrmPolicy p) throws NetlinkException {
        XfrmCodec.policyId(channel.request(XfrmCodec.XFRM_MSG_DELPOLICY, Rtnl.NLM_F_ACK), p);
        int errno = channel.execute();
        if (errno == Errno.ENOENT) {
            return false;
        }
        if (errno != 0) {
            throw new NetlinkException("XFRM_MSG_DELPOLICY", p.describe(), errno, channel.lastKernelMessage());
        }
        return true;
    }

    /** Every main-type policy of the namespace (a dump); policies we cannot read are left out. */
    public synchronized List<XfrmPolicy> policies() throws NetlinkException {
        try {
            return channel.dump(XfrmCodec.XFRM_MSG_GETPOLICY, XfrmCodec::dumpRequest, XfrmCodec::decode);
        } catch (NetlinkException e) {
            throw new NetlinkException("XFRM_MSG_GETPOLICY", "dump", e.errno(), e.kernelMessage());
        }
    }

    private static String describe(XfrmPolicy p) {
        return p.describe() + (p.tmpls().isEmpty() ? "" : " " + p.tmpls().get(0));
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            channel.close();
        }
    }
}
