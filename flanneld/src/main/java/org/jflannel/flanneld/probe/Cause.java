package org.jflannel.flanneld.probe;

import java.util.Locale;

/** Why a peer cannot be reached through the overlay; see docs/operations.md for what to do about each. */
public enum Cause {
    /** The plain probe to the peer's public IP failed too: the hosts cannot reach each other at all. */
    UNDERLAY_UNREACHABLE,
    /** Our neighbour or FDB entry for the peer carries another MAC (or destination) than its lease says. */
    STALE_ENTRIES,
    /** The underlay answers, the overlay does not: the encapsulation port is most likely filtered. */
    OVERLAY_BLOCKED,
    /** Small overlay probes pass, full-size ones (DF set) do not. */
    MTU_BLACK_HOLE;

    /** The metric label and JSON value: {@code overlay_blocked}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
