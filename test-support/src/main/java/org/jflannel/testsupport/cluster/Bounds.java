package org.jflannel.testsupport.cluster;

import java.time.Duration;
import org.jflannel.testsupport.vm.KernelVm;

/**
 * The harness's time bounds for this machine: a bound written for the host, times
 * {@link #IN_VM_FACTOR} in the kernel VM (TCG emulates every instruction: a JVM starts in seconds there,
 * and the guest's crypto has none of the host's vector units), times {@code JFLANNEL_TEST_SLOWDOWN} (a
 * number, default 1) where a machine is known to be slow or shared. Bounds say "stuck", never "fast":
 * each is many times the time it bounds on a quiet host.
 */
public final class Bounds {
    static final int IN_VM_FACTOR = 3;

    private Bounds() {
    }

    /** {@code host} scaled for where this JVM runs. */
    public static Duration scaled(Duration host) {
        return Duration.ofMillis(Math.round(host.toMillis() * factor(KernelVm.inVm(), System.getenv("JFLANNEL_TEST_SLOWDOWN"))));
    }

    static double factor(boolean inVm, String slowdown) {
        double f = inVm ? IN_VM_FACTOR : 1;
        if (slowdown == null || slowdown.isBlank()) {
            return f;
        }
        try {
            double s = Double.parseDouble(slowdown.trim());
            if (!(s >= 1 && s <= 20)) {
                throw new IllegalArgumentException("JFLANNEL_TEST_SLOWDOWN: expected a number from 1 to 20, got \"" + slowdown + "\"");
            }
            return f * s;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("JFLANNEL_TEST_SLOWDOWN: expected a number from 1 to 20, got \"" + slowdown + "\"", e);
        }
    }
}
