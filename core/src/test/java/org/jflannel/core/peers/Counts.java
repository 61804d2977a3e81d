package org.jflannel.core.peers;

/** Counts what the loop reports, for assertions. */
final class Counts implements LoopCounters {
    int skipped;
    int readFailed;
    int reconciled;
    int repaired;

    @Override
    public void leaseSkipped() {
        skipped++;
    }

    @Override
    public void readFailed() {
        readFailed++;
    }

    @Override
    public void reconciled() {
        reconciled++;
    }

    @Override
    public void repaired(int n) {
        repaired += n;
    }
}
