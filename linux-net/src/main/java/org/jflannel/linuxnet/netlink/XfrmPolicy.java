package org.jflannel.linuxnet.netlink;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.List;
import java.util.Objects;

/**
 * One XFRM policy as upstream flannel's ipsec backend installs it (vishvananda/netlink's
 * {@code XfrmPolicy}): a selector of source and destination prefix (any protocol, any port), a
 * direction, a priority, and the templates that say which SA must carry the traffic. Marks, interface
 * ids and socket policies are not modelled: upstream uses none.
 */
public record XfrmPolicy(IpPrefix src, IpPrefix dst, Dir dir, int priority, List<Tmpl> tmpls) {
    /** {@code XFRM_POLICY_IN / OUT / FWD}: the kernel's numbers are the ordinals. */
    public enum Dir {
        IN, OUT, FWD;

        static Dir of(int v) {
            return v >= 0 && v < values().length ? values()[v] : null;
        }
    }

    public static final int IPPROTO_ESP = 50;
    public static final int XFRM_MODE_TRANSPORT = 0;
    public static final int XFRM_MODE_TUNNEL = 1;

    public XfrmPolicy {
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(dst, "dst");
        Objects.requireNonNull(dir, "dir");
        if (src.isIpv4() != dst.isIpv4()) {
            throw new IllegalArgumentException("xfrm policy " + src + " -> " + dst + ": mixed address families");
        }
        src = src.network();
        dst = dst.network();
        tmpls = List.copyOf(tmpls);
    }

    /**
     * A template ({@code xfrm_user_tmpl}): the SA's outer addresses, protocol (ESP = 50), mode
     * (tunnel = 1) and request id, which ties the policy to the SA that charon negotiates for it.
     */
    public record Tmpl(InetAddress src, InetAddress dst, int proto, int mode, int reqid) {
        public Tmpl {
            Objects.requireNonNull(src, "tmpl src");
            Objects.requireNonNull(dst, "tmpl dst");
            if ((src instanceof Inet4Address) != (dst instanceof Inet4Address)) {
                throw new IllegalArgumentException("xfrm tmpl " + src.getHostAddress() + " -> "
                        + dst.getHostAddress() + ": mixed address families");
            }
            if (proto < 0 || proto > 255 || mode < 0 || mode > 255) {
                throw new IllegalArgumentException("xfrm tmpl: proto and mode must be 0..255, got " + proto + ", " + mode);
            }
        }

        /** ESP in tunnel mode between two public addresses, as upstream's every template. */
        public static Tmpl espTunnel(InetAddress src, InetAddress dst, int reqid) {
            return new Tmpl(src, dst, IPPROTO_ESP, XFRM_MODE_TUNNEL, reqid);
        }

        @Override
        public String toString() {
            return "tmpl src " + Inets.format(src) + " dst " + Inets.format(dst) + " proto " + proto
                    + " mode " + mode + " reqid " + reqid;
        }
    }

    /** The selector and direction, the policy's identity in the kernel (what GET and DEL match on). */
    public String describe() {
        return src + " -> " + dst + " dir " + dir.name().toLowerCase(java.util.Locale.ROOT);
    }
}
