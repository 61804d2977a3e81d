package org.jflannel.backend.udp;

import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.util.Objects;
import org.jflannel.core.Ip4Net;

/** One remote node: its lease subnet and where its UDP socket listens ({@code PublicIP:Port}). */
record Peer(Ip4Net subnet, InetSocketAddress endpoint) {

    Peer {
        Objects.requireNonNull(subnet, "subnet");
        Objects.requireNonNull(endpoint, "endpoint");
        if (!(endpoint.getAddress() instanceof Inet4Address)) {
            throw new IllegalArgumentException("peer " + subnet + ": endpoint must be a resolved IPv4 address, got " + endpoint);
        }
    }

    static Peer of(Ip4Net subnet, Inet4Address publicIp, int port) {
        return new Peer(subnet, new InetSocketAddress(publicIp, port));
    }

    /** The public IP as a 32-bit int, the form the packet paths compare. */
    int publicIp() {
        // Inet4Address.hashCode() is the address itself (getAddress() would copy it into a new array per packet)
        return endpoint.getAddress().hashCode();
    }

    int port() {
        return endpoint.getPort();
    }

    @Override
    public String toString() {
        return subnet + " via " + endpoint.getAddress().getHostAddress() + ":" + endpoint.getPort();
    }
}
