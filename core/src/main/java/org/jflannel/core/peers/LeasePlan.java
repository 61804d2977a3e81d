package org.jflannel.core.peers;

import java.util.List;
import java.util.Objects;
import org.jflannel.core.Lease;

/** What one peer lease asks of the kernel ({@link Planned}), or why it asks nothing ({@link Skipped}). */
public sealed interface LeasePlan<E> permits LeasePlan.Planned, LeasePlan.Skipped {

    /**
     * The lease's entries (one per address family both it and we have, say), and the families the
     * backend refused (one reason each: counted and logged once, re-planned by a full reconcile).
     */
    record Planned<E>(Lease lease, List<E> entries, List<String> refusals) implements LeasePlan<E> {
        public Planned {
            Objects.requireNonNull(lease, "lease");
            entries = List.copyOf(entries);
            refusals = List.copyOf(refusals);
        }

        public String key() {
            return lease.key();
        }
    }

    /** Not planned: logged with {@code reason}; {@code counted} as a skipped lease (an error), or not (another backend's lease). */
    record Skipped<E>(String reason, boolean counted) implements LeasePlan<E> {
        public Skipped {
            Objects.requireNonNull(reason, "reason");
        }
    }

    static <E> LeasePlan<E> of(Lease lease, List<E> entries) {
        return new Planned<>(lease, entries, List.of());
    }

    static <E> LeasePlan<E> of(Lease lease, List<E> entries, List<String> refusals) {
        return new Planned<>(lease, entries, refusals);
    }

    /** A lease this backend cannot use (bad backend data, missing address): an error. */
    static <E> LeasePlan<E> skipped(String reason) {
        return new Skipped<>(reason, true);
    }

    /** A lease that is not for this backend (a mixed cluster): only a warning. */
    static <E> LeasePlan<E> ignored(String reason) {
        return new Skipped<>(reason, false);
    }
}
