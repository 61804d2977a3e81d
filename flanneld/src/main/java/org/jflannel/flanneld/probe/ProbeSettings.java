package org.jflannel.flanneld.probe;

import java.time.Duration;

/**
 * How the prober works for this node's backend.
 *
 * @param interval     one round per peer per interval (jittered ±10 %)
 * @param timeout      how long a probe may take before it counts as lost
 * @param fullSize     IP length of the full-size probe: the overlay MTU (FLANNEL_MTU)
 * @param vxlanDevice  {@code flannel.<VNI>} whose entries are checked for staleness; null for udp and host-gw
 * @param hostGw       host-gw (ours, issue 23): the peer carries no flannel address; the overlay probe goes to
 *                     its subnet's first address ({@code .1}, the {@code cni0} bridge the CNI plugin addresses
 *                     from subnet.env) along our route via its public IP, and there are no entries to check
 */
public record ProbeSettings(Duration interval, Duration timeout, int fullSize, String vxlanDevice, boolean hostGw) {
    /** IP length of the small probe: what {@code ping} sends by default. */
    static final int SMALL_SIZE = 84;

    public ProbeSettings {
        if (interval.isNegative() || interval.isZero() || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("probe interval and timeout must be positive, got " + interval + ", " + timeout);
        }
        if (fullSize < SMALL_SIZE) {
            throw new IllegalArgumentException("full-size probe: overlay MTU must be >= " + SMALL_SIZE + ", got " + fullSize);
        }
        if (hostGw && vxlanDevice != null) {
            throw new IllegalArgumentException("host-gw probing has no vxlan device, got " + vxlanDevice);
        }
    }

    /** vxlan ({@code vxlanDevice} set) or udp (null). */
    public ProbeSettings(Duration interval, Duration timeout, int fullSize, String vxlanDevice) {
        this(interval, timeout, fullSize, vxlanDevice, false);
    }

    /** What the start line names: the device whose entries are checked, or what is probed. */
    String describe() {
        return hostGw ? "host-gw routes" : vxlanDevice == null ? "flannel0" : vxlanDevice;
    }
}
