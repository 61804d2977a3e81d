package org.jflannel.testsupport.kube;

import io.fabric8.mockwebserver.crud.Attribute;
import io.fabric8.mockwebserver.crud.AttributeSet;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WatchLogTest {

    private static final AttributeSet NODE = new AttributeSet(new Attribute("plural", "nodes"));

    private static WatchLog.Change added(long rv) {
        return new WatchLog.Change(rv, null, NODE, "{\"rv\":" + rv + "}");
    }

    private static List<Long> rvs(List<WatchLog.Change> changes) {
        return changes.stream().map(WatchLog.Change::rv).toList();
    }

    @Test
    void afterAVersionGivesOnlyLaterChangesOldestFirst() {
        WatchLog log = new WatchLog(10);
        for (long rv : new long[] {2, 3, 7, 9}) {
            log.append(added(rv));
        }

        assertThat(rvs(log.after(3).orElseThrow())).containsExactly(7L, 9L);
        assertThat(rvs(log.after(0).orElseThrow())).containsExactly(2L, 3L, 7L, 9L);
        assertThat(log.after(9).orElseThrow()).isEmpty();
        assertThat(log.lastRv()).isEqualTo(9);
    }

    @Test
    void changesBeyondCapacityAreCompactedAndAWatchFromBeforeThemIsGone() {
        WatchLog log = new WatchLog(3);
        for (long rv = 1; rv <= 5; rv++) {
            log.append(added(rv));
        }

        assertThat(log.compactedThrough()).isEqualTo(2);
        assertThat(log.after(1)).as("change 2 is gone: 410").isEmpty();
        assertThat(rvs(log.after(2).orElseThrow())).containsExactly(3L, 4L, 5L);
    }

    @Test
    void compactDropsEverythingSoOnlyTheLatestVersionCanResume() {
        WatchLog log = new WatchLog(100);
        log.append(added(4));
        log.append(added(6));
        log.compact();

        assertThat(log.after(4)).isEmpty();
        assertThat(log.after(6).orElseThrow()).isEmpty();
        log.append(added(8));
        assertThat(rvs(log.after(6).orElseThrow())).containsExactly(8L);
    }

    @Test
    void listenersHearAppendsAndCompactions() {
        WatchLog log = new WatchLog(2);
        int[] heard = new int[1];
        log.onChange(() -> heard[0]++);
        log.append(added(1));
        log.compact();

        assertThat(heard[0]).isEqualTo(2);
    }

    @Test
    void versionsOutOfOrderOrEmptyChangesAreRejectedNamingTheField() {
        WatchLog log = new WatchLog(2);
        log.append(added(5));

        assertThatThrownBy(() -> log.append(added(5))).hasMessageContaining("rv 5 not after 5");
        assertThatThrownBy(() -> new WatchLog.Change(0, null, NODE, "{}")).hasMessageContaining("rv:");
        assertThatThrownBy(() -> new WatchLog.Change(1, null, null, "{}")).hasMessageContaining("before/after");
        assertThatThrownBy(() -> new WatchLog(0)).hasMessageContaining("capacity:");
    }
}
