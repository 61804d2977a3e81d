package org.jflannel.backend.ipip;

import org.jflannel.linuxnet.NetlinkException;

/** Pure: telling "this kernel has no ipip tunnels" apart from other failures, and saying so. */
final class KernelFeature {
    static final String MODULE = "ipip";

    private KernelFeature() {
    }

    /** RTM_NEWLINK of kind ipip refused as an unknown device type (EOPNOTSUPP), or the family/protocol absent. */
    static boolean missing(NetlinkException e) {
        String errno = e.errnoName();
        return e.operation().equals("RTM_NEWLINK")
                && (errno.equals("EOPNOTSUPP") || errno.equals("EAFNOSUPPORT") || errno.equals("EPROTONOSUPPORT"));
    }

    static String message(NetlinkException e) {
        return "the kernel has no IPv4-in-IPv4 tunnels: load kernel module " + MODULE + " (modprobe " + MODULE
                + "; CONFIG_NET_IPIP) or pick another backend" + (e.kernelMessage().isEmpty() ? "" : "; kernel: " + e.kernelMessage());
    }
}
