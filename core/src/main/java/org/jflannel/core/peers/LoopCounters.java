package org.jflannel.core.peers;

/** What {@link PeerLoop} counts; a backend's counters implement it beside their own (entries written, errors by kind). */
public interface LoopCounters {
    LoopCounters NONE = new LoopCounters() {
        @Override
        public void leaseSkipped() {
        }

        @Override
        public void readFailed() {
        }

        @Override
        public void reconciled() {
        }

        @Override
        public void repaired(int n) {
        }
    };

    /** A lease that could not be planned or applied, or a refused family. */
    void leaseSkipped();

    /** A reconcile pass could not read the kernel (a dump failed). */
    void readFailed();

    /** A reconcile pass completed. */
    void reconciled();

    /** {@code n} entries (or parts of them, or device settings) put right by a reconcile pass. */
    void repaired(int n);
}
