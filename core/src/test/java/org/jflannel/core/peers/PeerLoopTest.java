package org.jflannel.core.peers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jflannel.core.LeaseEvent.added;
import static org.jflannel.core.LeaseEvent.removed;

import java.util.ArrayList;
import java.util.List;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.junit.jupiter.api.Test;

class PeerLoopTest {
    private static final Lease OWN = lease("10.244.1.0/24", "192.0.2.1");
    private static final Lease A = lease("10.244.2.0/24", "192.0.2.2");
    private static final Lease A_MOVED = lease("10.244.2.0/24", "192.0.2.22");
    private static final Lease B = lease("10.244.3.0/24", "192.0.2.3");

    private final FakeKernel kernel = new FakeKernel();
    private final Counts counts = new Counts();
    private final PeerLoop<String> loop = new PeerLoop<>("fake", OWN, kernel, counts);

    @Test
    void addedLeasesAreWrittenTheOwnLeaseNever() {
        loop.apply(List.of(added(A), added(OWN), added(B)));

        assertThat(kernel.table).containsExactly("10.244.2.0/24@192.0.2.2", "10.244.3.0/24@192.0.2.3");
        assertThat(loop.peers()).isEqualTo(2);
    }

    @Test
    void straysGoAfterTheFirstBatchNotBefore() {
        kernel.table.add("10.244.9.0/24@192.0.2.9"); // a peer that vanished while we were down (issue #2554)

        loop.reconcile(true);
        assertThat(kernel.table).containsExactly("10.244.9.0/24@192.0.2.9");

        loop.apply(List.of(added(A)));
        assertThat(kernel.table).containsExactly("10.244.2.0/24@192.0.2.2");
        assertThat(counts.repaired).isEqualTo(1);
    }

    @Test
    void aChangedLeaseHasItsOldEntryDeletedBeforeTheNewOneIsWritten() {
        loop.apply(List.of(added(A)));
        kernel.calls.clear();

        loop.apply(List.of(added(A_MOVED)));

        assertThat(kernel.calls).containsExactly("-10.244.2.0/24@192.0.2.2", "+10.244.2.0/24@192.0.2.22");
        assertThat(kernel.table).containsExactly("10.244.2.0/24@192.0.2.22");
    }

    @Test
    void aChangedLeaseWhoseNewEntryUpdatesTheOldInPlaceIsOnlyWritten() {
        kernel.inPlace = true;
        loop.apply(List.of(added(A)));
        kernel.calls.clear();

        loop.apply(List.of(added(A_MOVED)));

        assertThat(kernel.calls).containsExactly("+10.244.2.0/24@192.0.2.22");
        assertThat(kernel.table).containsExactly("10.244.2.0/24@192.0.2.22");
        loop.apply(List.of(removed(A_MOVED)));
        assertThat(kernel.calls).containsExactly("+10.244.2.0/24@192.0.2.22", "-10.244.2.0/24@192.0.2.22");
    }

    @Test
    void anUnchangedLeaseIsWrittenAgainAndNothingDeleted() {
        loop.apply(List.of(added(A)));
        kernel.calls.clear();

        loop.apply(List.of(added(A)));

        assertThat(kernel.calls).containsExactly("+10.244.2.0/24@192.0.2.2");
    }

    @Test
    void aRemovedLeaseHasItsEntriesDeletedEvenWhenNeverProgrammed() {
        loop.apply(List.of(added(A)));
        kernel.table.add("10.244.3.0/24@192.0.2.3"); // B's entry, written by an earlier run

        loop.apply(List.of(removed(A), removed(B)));

        assertThat(kernel.table).isEmpty();
        assertThat(loop.peers()).isZero();
    }

    @Test
    void aRemovalInTheSameBatchComesAfterThePendingWrite() {
        loop.apply(List.of(added(B)));
        kernel.calls.clear();

        loop.apply(List.of(added(A), removed(A)));

        assertThat(kernel.calls).containsExactly("+10.244.2.0/24@192.0.2.2", "-10.244.2.0/24@192.0.2.2");
    }

    @Test
    void aSkippedLeaseIsCountedAnotherBackendsLeaseIsNot() {
        Lease noIp = new Lease(Ip4Net.parse("10.244.4.0/24"), null, new LeaseAttrs(null, null, "fake", null, null), null);
        Lease other = new Lease(Ip4Net.parse("10.244.5.0/24"), null, new LeaseAttrs(ip("192.0.2.5"), null, "udp", null, null), null);

        loop.apply(List.of(added(noIp), added(other), added(A)));

        assertThat(counts.skipped).isEqualTo(1);
        assertThat(kernel.table).containsExactly("10.244.2.0/24@192.0.2.2");
    }

    @Test
    void aLeaseThatTurnsUnusableHasItsEntriesDeleted() {
        loop.apply(List.of(added(A)));

        loop.apply(List.of(added(new Lease(A.subnet(), null, new LeaseAttrs(ip("192.0.2.2"), null, "udp", null, null), null))));

        assertThat(kernel.table).isEmpty();
        assertThat(loop.peers()).isZero();
    }

    @Test
    void aLeaseThatTurnsUnusableKeepsItsEntriesWhenTheKernelSideKeepsThem() {
        kernel.keepWhenSkipped = true;
        loop.apply(List.of(added(A)));
        kernel.calls.clear();

        loop.apply(List.of(added(new Lease(A.subnet(), null, new LeaseAttrs(ip("192.0.2.2"), null, "udp", null, null), null))));

        assertThat(kernel.calls).isEmpty();
        assertThat(kernel.table).containsExactly("10.244.2.0/24@192.0.2.2");
        assertThat(loop.peers()).as("no longer the loop's").isZero();
    }

    @Test
    void aFailedWriteIsRetriedByFullPassesOnly() {
        kernel.refuse.add("10.244.2.0/24@192.0.2.2");
        loop.apply(List.of(added(A))); // the first batch's pass is a full one: one repair attempt
        assertThat(loop.failing()).isEqualTo(1);
        kernel.calls.clear();

        loop.reconcile(false); // an event (the rollback's deletions are events too) never retries it
        assertThat(kernel.calls).isEmpty();

        kernel.refuse.clear();
        loop.reconcile(true);
        assertThat(kernel.calls).containsExactly("repair 10.244.2.0/24@192.0.2.2");
        assertThat(kernel.table).containsExactly("10.244.2.0/24@192.0.2.2");
        assertThat(loop.failing()).isZero();
    }

    @Test
    void anEntryLostUnderUsIsRepairedByAnyPass() {
        loop.apply(List.of(added(A), added(B)));
        kernel.table.remove("10.244.2.0/24@192.0.2.2"); // deleted by hand
        int before = counts.repaired;

        loop.reconcile(false);

        assertThat(kernel.table).contains("10.244.2.0/24@192.0.2.2");
        assertThat(counts.repaired - before).isEqualTo(1);
    }

    @Test
    void aRefusedPeerIsCountedOnceAndAcceptedByAFullPassOnceReachable() {
        kernel.unreachable.add("192.0.2.2");
        loop.apply(List.of(added(A)));
        loop.reconcile(true);
        assertThat(counts.skipped).as("refused once, not per pass").isEqualTo(1);
        assertThat(kernel.table).isEmpty();

        kernel.unreachable.clear(); // the segment grew
        loop.reconcile(false);
        assertThat(kernel.table).as("events do not re-plan").isEmpty();
        loop.reconcile(true);

        assertThat(kernel.table).containsExactly("10.244.2.0/24@192.0.2.2");
        assertThat(counts.skipped).isEqualTo(1);
    }

    @Test
    void aRenewedDeviceGetsEveryPeerReplayedInOneBulkWrite() {
        loop.apply(List.of(added(A), added(B)));
        kernel.table.clear(); // the device went, and its entries with it
        kernel.devices = Devices.RENEWED;

        loop.reconcile(true);

        assertThat(kernel.table).containsExactlyInAnyOrder("10.244.2.0/24@192.0.2.2", "10.244.3.0/24@192.0.2.3");
        Writing<String> last = kernel.writings.get(kernel.writings.size() - 1);
        assertThat(last.bulk()).isTrue();
        assertThat(last.first()).isFalse();
    }

    @Test
    void aFailedRecreationIsRetriedAfterTheBackOffAndASuccessResetsIt() {
        HealingTest.FakeTimer timer = new HealingTest.FakeTimer();
        loop.healWith(new Healing("fake", loop, Runnable::run, new HealTiming(java.time.Duration.ZERO,
                java.time.Duration.ZERO, java.time.Duration.ofSeconds(1), java.time.Duration.ofSeconds(30)), timer));
        loop.apply(List.of(added(A)));
        kernel.table.clear();
        kernel.devices = Devices.FAILED;

        loop.reconcile(true);
        assertThat(timer.delays()).containsExactly(java.time.Duration.ofSeconds(1));
        kernel.devices = Devices.FAILED;
        timer.runDue(); // the retry: fails again
        assertThat(timer.delays()).containsExactly(java.time.Duration.ofSeconds(2));

        kernel.devices = Devices.RENEWED;
        timer.runDue(); // the next one works: every peer replayed, the back-off starts over
        assertThat(kernel.table).containsExactly("10.244.2.0/24@192.0.2.2");
        kernel.devices = Devices.FAILED;
        loop.reconcile(true);
        assertThat(timer.delays()).containsExactly(java.time.Duration.ofSeconds(1));
    }

    @Test
    void theBackendsWatchFeedsTheHealingAndStopsWithTheLoop() {
        boolean[] watchClosed = {false};
        Healing[] fed = {null};
        loop.heal(Runnable::run, new HealTiming(java.time.Duration.ZERO, java.time.Duration.ZERO, java.time.Duration.ZERO,
                java.time.Duration.ZERO), "fake-timer", h -> {
                    fed[0] = h;
                    return () -> watchClosed[0] = true;
                });
        assertThat(fed[0]).isNotNull();

        loop.close();

        assertThat(watchClosed[0]).isTrue();
    }

    @Test
    void aMissingDeviceEndsThePass() {
        loop.apply(List.of(added(A)));
        kernel.table.clear();
        kernel.devices = Devices.MISSING;
        int before = counts.reconciled;

        loop.reconcile(true);

        assertThat(kernel.table).isEmpty();
        assertThat(counts.reconciled).isEqualTo(before);
    }

    @Test
    void aFailedReadIsCountedAndEndsThePass() {
        kernel.readFails = true;

        loop.reconcile(true);

        assertThat(counts.readFailed).isEqualTo(1);
        assertThat(counts.reconciled).isZero();
    }

    @Test
    void aLargeFirstBatchIsOneBulkWriteASmallOneIsNot() {
        List<LeaseEvent> many = new ArrayList<>();
        for (int i = 0; i < PeerLoop.BULK_MIN; i++) {
            many.add(added(lease("10.244." + (10 + i) + ".0/24", "192.0.2." + (10 + i))));
        }
        loop.apply(many);
        loop.apply(List.of(added(A)));

        assertThat(kernel.writings).extracting(Writing::bulk, Writing::first)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(true, true), org.assertj.core.groups.Tuple.tuple(false, false));
        assertThat(kernel.writings.get(0)).isNotNull();
        assertThat(kernel.table).hasSize(PeerLoop.BULK_MIN + 1);
    }

    @Test
    void aClosedLoopAppliesNothing() {
        loop.close();

        loop.apply(List.of(added(A)));
        loop.reconcile(true);

        assertThat(kernel.calls).isEmpty();
    }

    static Lease lease(String subnet, String publicIp) {
        return new Lease(Ip4Net.parse(subnet), null, new LeaseAttrs(ip(publicIp), null, "fake", null, null), null);
    }

    static java.net.Inet4Address ip(String text) {
        return Ip4Net.toInet(Ip4Net.parseAddress(text));
    }
}
