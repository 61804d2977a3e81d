package org.jflannel.backend.vxlan;

import java.util.List;
import java.util.Objects;
import org.jflannel.core.Lease;

/** What one peer lease asks of the kernel: entries for each family both it and we have (0..2). */
record PeerPlan(Lease lease, List<PeerEntries> entries) {
    PeerPlan {
        Objects.requireNonNull(lease, "lease");
        entries = List.copyOf(entries);
    }

    String key() {
        return lease.key();
    }
}
