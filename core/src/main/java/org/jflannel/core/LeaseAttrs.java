package org.jflannel.core;

import java.net.Inet4Address;
import java.net.Inet6Address;

/**
 * What a node publishes with its lease (upstream {@code lease.LeaseAttrs}): its public addresses,
 * backend type and the backend's own JSON (kept raw, e.g. {@code {"VNI":1,"VtepMAC":"12:c6:..."}}),
 * so that a backend we do not understand still round-trips byte for byte.
 *
 * @param publicIp       the node's public IPv4 (null in IPv6-only clusters)
 * @param publicIpv6     the node's public IPv6, or null
 * @param backendType    {@code vxlan}, {@code udp} (upstream writes "" for udp), ...; never null
 * @param backendData    raw JSON of the IPv4 backend data, or null
 * @param backendV6Data  raw JSON of the IPv6 backend data, or null
 */
public record LeaseAttrs(
        Inet4Address publicIp,
        Inet6Address publicIpv6,
        String backendType,
        String backendData,
        String backendV6Data) {

    public LeaseAttrs {
        if (backendType == null) {
            backendType = "";
        }
    }
}
