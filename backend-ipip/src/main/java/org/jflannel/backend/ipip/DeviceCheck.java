package org.jflannel.backend.ipip;

import java.net.Inet4Address;
import java.util.Optional;
import org.jflannel.linuxnet.netlink.IptunInfo;
import org.jflannel.linuxnet.netlink.Link;

/**
 * Pure: whether an existing {@code flannel.ipip} can be adopted. Upstream refuses a device of another
 * kind (the user's to remove) and re-creates an ipip device whose local is not the external interface's
 * address or whose remote is set. Ours: also one in external (collect-metadata) mode or with a FOU/GUE
 * encapsulation, which could not carry a peer's plain IPv4-in-IPv4 packets.
 */
final class DeviceCheck {
    static final String NAME = "flannel.ipip";
    /** Upstream's error, verbatim. */
    static final String NOT_IPIP = NAME + " isn't an ipip mode device, please remove device and try again";

    private DeviceCheck() {
    }

    /** Empty: adoptable. Else the reason to re-create it, for upstream's warning. */
    static Optional<String> incompatibility(Link existing, Inet4Address local) {
        IptunInfo t = existing.iptun();
        if (t == null) {
            return Optional.of("no tunnel attributes");
        }
        if (t.local() == null || !t.local().equals(local) || t.remote() != null) {
            return Optional.of("local=" + addr(t.local()) + " remote=" + addr(t.remote()));
        }
        if (t.external()) {
            return Optional.of("external (collect-metadata) mode");
        }
        if (t.encapType() != 0) {
            return Optional.of("encap type " + t.encapType());
        }
        return Optional.empty();
    }

    static boolean isIpip(Link l) {
        return "ipip".equals(l.kind());
    }

    private static String addr(Inet4Address a) {
        return a == null ? "<nil>" : a.getHostAddress();
    }
}
