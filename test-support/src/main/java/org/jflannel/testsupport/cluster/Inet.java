package org.jflannel.testsupport.cluster;

import java.net.InetAddress;
import org.jflannel.core.Ip4Net;
import org.jflannel.linuxnet.netlink.IpPrefix;

/** IPv4 and IPv6 literals to InetAddress without any name lookup. */
final class Inet {
    private Inet() {
    }

    static InetAddress parse(String literal) {
        return literal.contains(":") ? IpPrefix.parse(literal).address() : Ip4Net.toInet(Ip4Net.parseAddress(literal));
    }
}
