package org.jflannel.flanneld.daemon;

import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours (issue 23): the JDK's default heap growth while the lease snapshot is being programmed, the launchers'
 * tight one after. The launchers run SerialGC with {@code -Xmn2m -XX:MinHeapFreeRatio=5 -XX:MaxHeapFreeRatio=10}
 * (the lean footprint, issue 19): the old generation is kept within 5–10 % of its live data, and Serial follows
 * every collection that had to grow it for promotions with a full one. A cold start of 10,000 leases promotes
 * tens of MB through the 2 MB young generation, so it ran ~38 full collections, ~1 CPU s of the VM thread
 * (docs/benchmarks.md "Scale, session 9"). Both ratios are manageable flags: {@link #generous()} sets the JDK
 * defaults (40 / 70) for the start-up, {@link #tight()} puts the launcher's values back before the collection
 * that follows the snapshot ({@code LeaseLoop}), which then gives the extra heap back as before.
 *
 * <p>Needs the {@code jdk.management} module; a runtime without it (a jlinked image that left it out) keeps the
 * launcher's values all along, with one DEBUG line.
 */
final class StartupHeap {
    private static final Logger LOG = LoggerFactory.getLogger(StartupHeap.class);
    static final String MIN = "MinHeapFreeRatio";
    static final String MAX = "MaxHeapFreeRatio";
    /** The JDK's defaults. */
    static final int GENEROUS_MIN = 40;
    static final int GENEROUS_MAX = 70;

    /** The flags of the running JVM (the MXBean), or a test's. */
    interface Flags {
        int get(String name);

        void set(String name, int value);
    }

    private final Flags flags;
    private int launcherMin = -1;
    private int launcherMax = -1;

    StartupHeap(Flags flags) {
        this.flags = flags;
    }

    /** The running JVM's, if its runtime has {@code jdk.management}. */
    static Optional<StartupHeap> ofThisJvm() {
        if (ModuleLayer.boot().findModule("jdk.management").isEmpty()) {
            LOG.debug("heap ratios left as launched: no jdk.management module");
            return Optional.empty();
        }
        try {
            return Optional.of(new StartupHeap(HotSpotFlags.create()));
        } catch (RuntimeException | LinkageError e) {
            LOG.debug("heap ratios left as launched error={}", e.toString());
            return Optional.empty();
        }
    }

    /** Raises the ratios to the JDK's defaults where the launcher set them lower; remembers the launcher's. */
    void generous() {
        try {
            launcherMin = flags.get(MIN);
            launcherMax = flags.get(MAX);
            if (launcherMin >= GENEROUS_MIN && launcherMax >= GENEROUS_MAX) {
                launcherMin = -1; // nothing to put back
                return;
            }
            // Max first: the JVM refuses a MinHeapFreeRatio above MaxHeapFreeRatio
            flags.set(MAX, Math.max(launcherMax, GENEROUS_MAX));
            flags.set(MIN, Math.max(launcherMin, GENEROUS_MIN));
        } catch (RuntimeException e) {
            launcherMin = -1;
            LOG.debug("heap ratios left as launched error={}", e.toString());
        }
    }

    /** Puts the launcher's ratios back (once); true when they had been raised. */
    boolean tight() {
        if (launcherMin < 0) {
            return false;
        }
        try {
            flags.set(MIN, launcherMin); // Min first, the reverse of generous()
            flags.set(MAX, launcherMax);
            return true;
        } catch (RuntimeException e) {
            LOG.warn("heap ratios not put back error={}", e.toString());
            return false;
        } finally {
            launcherMin = -1;
        }
    }

    /** Through {@code com.sun.management.HotSpotDiagnosticMXBean}; loaded only when the module is there. */
    private static final class HotSpotFlags implements Flags {
        private final com.sun.management.HotSpotDiagnosticMXBean bean;

        private HotSpotFlags(com.sun.management.HotSpotDiagnosticMXBean bean) {
            this.bean = bean;
        }

        static Flags create() {
            return new HotSpotFlags(java.lang.management.ManagementFactory.getPlatformMXBean(
                    com.sun.management.HotSpotDiagnosticMXBean.class));
        }

        @Override
        public int get(String name) {
            return Integer.parseInt(bean.getVMOption(name).getValue());
        }

        @Override
        public void set(String name, int value) {
            bean.setVMOption(name, Integer.toString(value));
        }
    }
}
