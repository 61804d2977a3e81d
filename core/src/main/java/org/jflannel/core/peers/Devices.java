package org.jflannel.core.peers;

/** The backend's device(s) before a reconcile pass, as {@link PeerKernel#devices()} found or made them. */
public enum Devices {
    /** Present, as before: read back and repair. */
    READY,
    /** Re-created, or found again under a new index: every peer is planned again and written (a replay). */
    RENEWED,
    /** Gone and nothing to do about it now (an external interface that is not there): the pass ends. */
    MISSING,
    /** Gone and re-creating failed: the pass ends, the healing tries again after its back-off. */
    FAILED
}
