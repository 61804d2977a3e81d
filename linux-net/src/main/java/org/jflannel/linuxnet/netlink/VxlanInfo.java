package org.jflannel.linuxnet.netlink;

import java.net.InetAddress;

/**
 * The VXLAN attributes of a device as read back from the kernel (IFLA_INFO_DATA).
 *
 * @param underlayIndex 0 = none
 * @param local         null when unset
 * @param group         null when unset
 * @param port          host byte order (the kernel reports its default, 8472, when none was given)
 */
public record VxlanInfo(int vni, int underlayIndex, InetAddress local, InetAddress group, int port, boolean learning,
                        boolean gbp, boolean l2miss, boolean l3miss, boolean proxy, boolean rsc, int ttl, int tos,
                        boolean udp6ZeroCsumTx, boolean udp6ZeroCsumRx) {
}
