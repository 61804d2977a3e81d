package org.jflannel.testsupport.cluster;

/** Which daemon a cluster node runs: ours ({@code bin/flanneld}) or the real upstream flanneld ({@link UpstreamFlannel}). */
public enum NodeKind {
    /** jflannel's {@code bin/flanneld}: serves /readyz and /metrics on the healthz port. */
    JFLANNEL,
    /**
     * Upstream flanneld v0.20.2 with the same flags (ours are upstream's): it writes its own
     * subnet.env, which our CNI plugin reads; it serves only /healthz and logs each lease it applies.
     */
    UPSTREAM
}
