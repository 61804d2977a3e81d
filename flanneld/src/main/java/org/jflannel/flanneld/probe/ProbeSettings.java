package org.jflannel.flanneld.probe;

import java.time.Duration;

/**
 * How the prober works for this node's backend.
 *
 * @param interval     one round per peer per interval (jittered ±10 %)
 * @param timeout      how long a probe may take before it counts as lost
 * @param fullSize     IP length of the full-size probe: the overlay MTU (FLANNEL_MTU)
 * @param vxlanDevice  {@code flannel.<VNI>} whose entries are checked for staleness; null for udp
 */
public record ProbeSettings(Duration interval, Duration timeout, int fullSize, String vxlanDevice) {
    /** IP length of the small probe: what {@code ping} sends by default. */
    static final int SMALL_SIZE = 84;

    public ProbeSettings {
        if (interval.isNegative() || interval.isZero() || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("probe interval and timeout must be positive, got " + interval + ", " + timeout);
        }
        if (fullSize < SMALL_SIZE) {
            throw new IllegalArgumentException("full-size probe: overlay MTU must be >= " + SMALL_SIZE + ", got " + fullSize);
        }
    }
}
