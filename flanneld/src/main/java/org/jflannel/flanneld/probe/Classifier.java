package org.jflannel.flanneld.probe;

import java.util.Optional;

/**
 * Pure: one probe round's results → reachable (empty) or the cause. Order matters: a dead underlay
 * explains everything else; wrong kernel entries explain an overlay failure better than a filter
 * does (and are our side's to fix); a filter is what is left when small probes fail; small passing
 * and full-size failing is an MTU problem.
 */
final class Classifier {
    private Classifier() {
    }

    /**
     * @param small    the small overlay probe (after one retry when the first was lost)
     * @param fullSize the full-MTU overlay probe with DF set
     * @param underlay the plain probe to the public IP; null when not sent (small passed)
     * @param stale    our neighbour/FDB entries for the peer disagree with its lease
     */
    static Optional<Cause> classify(Outcome small, Outcome fullSize, Outcome underlay, boolean stale) {
        if (small.ok()) {
            return fullSize.ok() ? Optional.empty() : Optional.of(Cause.MTU_BLACK_HOLE);
        }
        if (underlay != null && !underlay.ok()) {
            return Optional.of(Cause.UNDERLAY_UNREACHABLE);
        }
        if (stale) {
            return Optional.of(Cause.STALE_ENTRIES);
        }
        return Optional.of(Cause.OVERLAY_BLOCKED);
    }
}
