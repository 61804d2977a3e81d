package org.jflannel.linuxnet.netlink;

import java.net.InetAddress;
import org.jflannel.core.MacAddress;

/**
 * A flannel-like node inside a test namespace: ext0 (veth, 192.0.2.1/24, up) as underlay and
 * flannel.1 (VNI 1, local 192.0.2.1, 10.244.1.0/32, up). Call on the namespace's thread.
 */
final class VxlanNode {
    static final MacAddress VTEP_MAC = MacAddress.parse("0e:00:00:00:01:01");

    final int ext;
    final int vxlan;

    private VxlanNode(int ext, int vxlan) {
        this.ext = ext;
        this.vxlan = vxlan;
    }

    static VxlanNode setUp(RtNetlink nl) throws Exception {
        nl.createVeth("ext0", "ext0p");
        int ext = nl.link("ext0").orElseThrow().index();
        nl.addAddress(ext, IpPrefix.parse("192.0.2.1/24"));
        nl.setUp(ext);
        nl.setUp(nl.link("ext0p").orElseThrow().index());
        nl.createVxlan(new VxlanSpec("flannel.1", 1, ext, InetAddress.getByName("192.0.2.1"), 0, false, false, 1450,
                VTEP_MAC));
        int vx = nl.link("flannel.1").orElseThrow().index();
        nl.addAddress(vx, IpPrefix.parse("10.244.1.0/32"));
        nl.setUp(vx);
        return new VxlanNode(ext, vx);
    }
}
