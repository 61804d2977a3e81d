package org.jflannel.backend.vxlan;

import java.net.InetAddress;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.VxlanInfo;
import org.jflannel.linuxnet.netlink.VxlanSpec;

/**
 * Pure: is an existing device usable as our VTEP (REFERENCE §6.4)? Upstream compares type, VNI,
 * underlay index, local address, group, l2miss, port and GBP (index, local, group and port only when
 * both sides are set). Ours: MTU and Learning, which upstream ignores, are corrected in place.
 *
 * @param incompatibility upstream's diff text ({@code vni: 2 vs 1}), or null when the device can be adopted
 */
record DeviceCheck(String incompatibility, boolean mtuDiffers, boolean learningDiffers) {

    boolean adoptable() {
        return incompatibility == null;
    }

    boolean needsCorrection() {
        return adoptable() && (mtuDiffers || learningDiffers);
    }

    static DeviceCheck compare(VxlanSpec want, Link have) {
        String diff = diff(want, have);
        if (diff != null) {
            return new DeviceCheck(diff, false, false);
        }
        boolean mtu = want.mtu() > 0 && want.mtu() != have.mtu();
        return new DeviceCheck(null, mtu, want.learning() != have.vxlan().learning());
    }

    private static String diff(VxlanSpec want, Link have) {
        if (!"vxlan".equals(have.kind()) || have.vxlan() == null) {
            return "link type: vxlan vs " + (have.kind().isEmpty() ? "unknown" : have.kind());
        }
        VxlanInfo v = have.vxlan();
        if (want.vni() != v.vni()) {
            return "vni: " + want.vni() + " vs " + v.vni();
        }
        if (want.underlayIndex() > 0 && v.underlayIndex() > 0 && want.underlayIndex() != v.underlayIndex()) {
            return "vtep (external) interface: " + want.underlayIndex() + " vs " + v.underlayIndex();
        }
        if (want.local() != null && v.local() != null && !want.local().equals(v.local())) {
            return "vtep (external) IP: " + text(want.local()) + " vs " + text(v.local());
        }
        // we never set a group, so upstream's group comparison (only when both are set) cannot differ
        if (v.l2miss()) {
            return "l2miss: false vs true";
        }
        if (want.port() > 0 && v.port() > 0 && want.port() != v.port()) {
            return "port: " + want.port() + " vs " + v.port();
        }
        if (want.gbp() != v.gbp()) {
            return "gbp: " + want.gbp() + " vs " + v.gbp();
        }
        return null;
    }

    private static String text(InetAddress a) {
        return a.getHostAddress();
    }
}
