package org.jflannel.linuxnet.netlink;

import java.net.InetAddress;
import org.jflannel.core.MacAddress;
import org.jflannel.linuxnet.Names;

/**
 * What flannel creates (REFERENCE §6.1): ttl 0, tos 0, proxy/rsc/l2miss/l3miss/udp6zerocsum* off are
 * sent explicitly; port only when &gt; 0 (big-endian on the wire); gbp only when true; no group/remote.
 *
 * @param underlayIndex 0 = none
 * @param local         null = none
 * @param port          0 = kernel default (8472)
 * @param mtu           0 = kernel default
 * @param mac           null = the kernel picks one
 */
public record VxlanSpec(String name, int vni, int underlayIndex, InetAddress local, int port, boolean learning,
                        boolean gbp, int mtu, MacAddress mac) {
    public VxlanSpec {
        Names.checkIfName("vxlan name", name);
        if (vni < 0 || vni > 0xffffff) {
            throw new IllegalArgumentException("vxlan " + name + ": VNI must be 0..16777215, got " + vni);
        }
        if (underlayIndex < 0) {
            throw new IllegalArgumentException("vxlan " + name + ": underlay index must be >= 0, got " + underlayIndex);
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("vxlan " + name + ": port must be 0..65535, got " + port);
        }
        if (mtu < 0 || (mtu > 0 && mtu < 68)) {
            throw new IllegalArgumentException("vxlan " + name + ": MTU must be 0 or >= 68, got " + mtu);
        }
    }
}
