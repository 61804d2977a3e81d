package org.jflannel.testsupport.cluster;

import java.net.InetAddress;
import org.jflannel.core.Ip4Net;

/** IPv4 literals to InetAddress without any name lookup. */
final class Inet {
    private Inet() {
    }

    static InetAddress parse(String dottedQuad) {
        return Ip4Net.toInet(Ip4Net.parseAddress(dottedQuad));
    }
}
