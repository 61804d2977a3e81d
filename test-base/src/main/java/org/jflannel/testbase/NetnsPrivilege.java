package org.jflannel.testbase;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * Whether this process may create namespaces and program the network (CAP_NET_ADMIN, and
 * CAP_SYS_ADMIN for the namespace mounts). Under the integration profile
 * ({@code jflannel.integration=true}) a missing privilege fails the test; elsewhere it aborts (skips) it.
 */
public final class NetnsPrivilege {
    static final int CAP_NET_ADMIN = 12;
    static final int CAP_SYS_ADMIN = 21;

    private NetnsPrivilege() {
    }

    public static void require() {
        decide(Boolean.getBoolean("jflannel.integration"), effectiveCaps());
    }

    /** Pure decision, unit-tested: fail under integration, skip otherwise. */
    static void decide(boolean integration, long capEff) {
        if ((capEff & (1L << CAP_NET_ADMIN)) != 0 && (capEff & (1L << CAP_SYS_ADMIN)) != 0) {
            return;
        }
        String why = "netns tests need CAP_NET_ADMIN and CAP_SYS_ADMIN (run as root); CapEff=" + Long.toHexString(capEff);
        if (integration) {
            Assertions.fail(why);
        }
        Assumptions.abort(why);
    }

    static long effectiveCaps() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("CapEff:")) {
                    return Long.parseUnsignedLong(line.substring(7).trim(), 16);
                }
            }
        } catch (IOException e) {
            return 0;
        }
        return 0;
    }
}
