package org.jflannel.backend.udp;

import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.util.Objects;
import org.jflannel.core.Ip4Net;

/**
 * One remote node: its lease subnet, where its UDP socket listens ({@code PublicIP:Port}), and
 * whether it decapsulates in its kernel ({@link UdpBackendData}), so that {@link KernelPath} may
 * send it whole super-packets.
 */
record Peer(Ip4Net subnet, InetSocketAddress endpoint, boolean kernelDecap) {

    Peer {
        Objects.requireNonNull(subnet, "subnet");
        Objects.requireNonNull(endpoint, "endpoint");
        if (!(endpoint.getAddress() instanceof Inet4Address)) {
            throw new IllegalArgumentException("peer " + subnet + ": endpoint must be a resolved IPv4 address, got " + endpoint);
        }
    }

    Peer(Ip4Net subnet, InetSocketAddress endpoint) {
        this(subnet, endpoint, false);
    }

    static Peer of(Ip4Net subnet, Inet4Address publicIp, int port) {
        return of(subnet, publicIp, port, false);
    }

    static Peer of(Ip4Net subnet, Inet4Address publicIp, int port, boolean kernelDecap) {
        return new Peer(subnet, new InetSocketAddress(publicIp, port), kernelDecap);
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
        return subnet + " via " + endpoint.getAddress().getHostAddress() + ":" + endpoint.getPort()
                + (kernelDecap ? " (kernel decap)" : "");
    }
}
