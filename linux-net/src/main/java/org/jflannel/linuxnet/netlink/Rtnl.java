package org.jflannel.linuxnet.netlink;

/** rtnetlink constants from the kernel uapi headers (linux/netlink.h, rtnetlink.h, if_link.h, neighbour.h). */
final class Rtnl {
    private Rtnl() {
    }

    static final int NLMSG_NOOP = 1;
    static final int NLMSG_ERROR = 2;
    static final int NLMSG_DONE = 3;
    static final int NLMSG_OVERRUN = 4;

    static final int NLM_F_REQUEST = 0x1;
    static final int NLM_F_MULTI = 0x2;
    static final int NLM_F_ACK = 0x4;
    static final int NLM_F_DUMP_INTR = 0x10;
    static final int NLM_F_DUMP = 0x300;
    static final int NLM_F_REPLACE = 0x100;
    static final int NLM_F_EXCL = 0x200;
    static final int NLM_F_CREATE = 0x400;
    static final int NLM_F_CAPPED = 0x100;   // in NLMSG_ERROR
    static final int NLM_F_ACK_TLVS = 0x200; // in NLMSG_ERROR
    static final int NLMSGERR_ATTR_MSG = 1;

    static final int RTM_NEWLINK = 16;
    static final int RTM_DELLINK = 17;
    static final int RTM_GETLINK = 18;
    static final int RTM_NEWADDR = 20;
    static final int RTM_DELADDR = 21;
    static final int RTM_GETADDR = 22;
    static final int RTM_NEWROUTE = 24;
    static final int RTM_DELROUTE = 25;
    static final int RTM_GETROUTE = 26;
    static final int RTM_NEWNEIGH = 28;
    static final int RTM_DELNEIGH = 29;
    static final int RTM_GETNEIGH = 30;
    static final int RTM_NEWNEXTHOP = 104;
    static final int RTM_DELNEXTHOP = 105;
    static final int RTM_GETNEXTHOP = 106;

    static final int AF_UNSPEC = 0;
    static final int AF_INET = 2;
    static final int AF_BRIDGE = 7;
    static final int AF_INET6 = 10;

    // ifinfomsg attributes
    static final int IFLA_ADDRESS = 1;
    static final int IFLA_IFNAME = 3;
    static final int IFLA_MTU = 4;
    static final int IFLA_LINK = 5;
    static final int IFLA_MASTER = 10;
    static final int IFLA_LINKINFO = 18;
    static final int IFLA_NET_NS_FD = 28;
    static final int IFLA_EXT_MASK = 29;
    static final int IFLA_INFO_KIND = 1;
    static final int IFLA_INFO_DATA = 2;
    static final int VETH_INFO_PEER = 1;
    static final int RTEXT_FILTER_SKIP_STATS = 1 << 3;

    static final int IFLA_VXLAN_ID = 1;
    static final int IFLA_VXLAN_GROUP = 2;
    static final int IFLA_VXLAN_LINK = 3;
    static final int IFLA_VXLAN_LOCAL = 4;
    static final int IFLA_VXLAN_TTL = 5;
    static final int IFLA_VXLAN_TOS = 6;
    static final int IFLA_VXLAN_LEARNING = 7;
    static final int IFLA_VXLAN_PROXY = 11;
    static final int IFLA_VXLAN_RSC = 12;
    static final int IFLA_VXLAN_L2MISS = 13;
    static final int IFLA_VXLAN_L3MISS = 14;
    static final int IFLA_VXLAN_PORT = 15;
    static final int IFLA_VXLAN_GROUP6 = 16;
    static final int IFLA_VXLAN_LOCAL6 = 17;
    static final int IFLA_VXLAN_UDP_ZERO_CSUM6_TX = 19;
    static final int IFLA_VXLAN_UDP_ZERO_CSUM6_RX = 20;
    static final int IFLA_VXLAN_GBP = 23;
    static final int IFLA_VXLAN_COLLECT_METADATA = 25;
    static final int IFLA_VXLAN_GPE = 27;

    // linux/if_tunnel.h: IFLA_IPTUN_* (ipip, sit)
    static final int IFLA_IPTUN_LINK = 1;
    static final int IFLA_IPTUN_LOCAL = 2;
    static final int IFLA_IPTUN_REMOTE = 3;
    static final int IFLA_IPTUN_TTL = 4;
    static final int IFLA_IPTUN_TOS = 5;
    static final int IFLA_IPTUN_PROTO = 9;
    static final int IFLA_IPTUN_PMTUDISC = 10;
    static final int IFLA_IPTUN_ENCAP_TYPE = 15;
    static final int IFLA_IPTUN_ENCAP_FLAGS = 16;
    static final int IFLA_IPTUN_ENCAP_SPORT = 17;
    static final int IFLA_IPTUN_ENCAP_DPORT = 18;
    static final int IFLA_IPTUN_COLLECT_METADATA = 19;

    // ifaddrmsg attributes
    static final int IFA_ADDRESS = 1;
    static final int IFA_LOCAL = 2;
    static final int IFA_FLAGS = 8;

    // rtmsg attributes
    static final int RTA_DST = 1;
    static final int RTA_OIF = 4;
    static final int RTA_GATEWAY = 5;
    static final int RTA_TABLE = 15;
    static final int RTA_NH_ID = 30;
    static final int RTNH_F_ONLINK = 4;
    static final int RTM_F_CLONED = 0x200;

    // nhmsg attributes (linux/nexthop.h)
    static final int NHA_ID = 1;
    static final int NHA_GROUP = 2;
    static final int NHA_BLACKHOLE = 4;
    static final int NHA_OIF = 5;
    static final int NHA_GATEWAY = 6;

    // ndmsg attributes
    static final int NDA_DST = 1;
    static final int NDA_LLADDR = 2;
    static final int NTF_SELF = 0x02;

    // multicast groups (bit masks for sockaddr_nl.nl_groups)
    static final int RTMGRP_LINK = 0x1;
    static final int RTMGRP_NEIGH = 0x4;
    static final int RTMGRP_IPV4_IFADDR = 0x10;
    static final int RTMGRP_IPV4_ROUTE = 0x40;
    static final int RTMGRP_IPV6_IFADDR = 0x100;
    static final int RTMGRP_IPV6_ROUTE = 0x400;

    static int family(java.net.InetAddress a) {
        return a instanceof java.net.Inet4Address ? AF_INET : AF_INET6;
    }

    static String typeName(int type) {
        return switch (type) {
            case RTM_NEWLINK -> "RTM_NEWLINK";
            case RTM_DELLINK -> "RTM_DELLINK";
            case RTM_GETLINK -> "RTM_GETLINK";
            case RTM_NEWADDR -> "RTM_NEWADDR";
            case RTM_DELADDR -> "RTM_DELADDR";
            case RTM_GETADDR -> "RTM_GETADDR";
            case RTM_NEWROUTE -> "RTM_NEWROUTE";
            case RTM_DELROUTE -> "RTM_DELROUTE";
            case RTM_GETROUTE -> "RTM_GETROUTE";
            case RTM_NEWNEIGH -> "RTM_NEWNEIGH";
            case RTM_DELNEIGH -> "RTM_DELNEIGH";
            case RTM_GETNEIGH -> "RTM_GETNEIGH";
            case RTM_NEWNEXTHOP -> "RTM_NEWNEXTHOP";
            case RTM_DELNEXTHOP -> "RTM_DELNEXTHOP";
            case RTM_GETNEXTHOP -> "RTM_GETNEXTHOP";
            default -> "RTM_" + type;
        };
    }
}
