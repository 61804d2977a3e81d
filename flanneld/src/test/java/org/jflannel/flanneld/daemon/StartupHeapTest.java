package org.jflannel.flanneld.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StartupHeapTest {
    /** Flags that enforce the JVM's rule (Min ≤ Max) and record every change in order. */
    private static final class FakeFlags implements StartupHeap.Flags {
        final Map<String, Integer> values = new HashMap<>();
        final List<String> changes = new ArrayList<>();

        FakeFlags(int min, int max) {
            values.put(StartupHeap.MIN, min);
            values.put(StartupHeap.MAX, max);
        }

        @Override
        public int get(String name) {
            return values.get(name);
        }

        @Override
        public void set(String name, int value) {
            int min = name.equals(StartupHeap.MIN) ? value : values.get(StartupHeap.MIN);
            int max = name.equals(StartupHeap.MAX) ? value : values.get(StartupHeap.MAX);
            if (min > max) {
                throw new IllegalArgumentException("MinHeapFreeRatio (" + min + ") must be <= MaxHeapFreeRatio (" + max + ")");
            }
            values.put(name, value);
            changes.add(name + "=" + value);
        }
    }

    @Test
    void theLaunchersTightRatiosAreRaisedForTheStartAndPutBackAfter() {
        FakeFlags f = new FakeFlags(5, 10);
        StartupHeap heap = new StartupHeap(f);

        heap.generous();
        assertThat(f.values).containsEntry(StartupHeap.MIN, 40).containsEntry(StartupHeap.MAX, 70);
        assertThat(heap.tight()).isTrue();

        assertThat(f.values).containsEntry(StartupHeap.MIN, 5).containsEntry(StartupHeap.MAX, 10);
        assertThat(f.changes).containsExactly("MaxHeapFreeRatio=70", "MinHeapFreeRatio=40",
                "MinHeapFreeRatio=5", "MaxHeapFreeRatio=10");
    }

    @Test
    void ratiosPutBackOnlyOnce() {
        FakeFlags f = new FakeFlags(5, 10);
        StartupHeap heap = new StartupHeap(f);
        heap.generous();
        heap.tight();

        assertThat(heap.tight()).isFalse();
        assertThat(f.changes).hasSize(4);
    }

    @Test
    void ratiosAtOrAboveTheDefaultsAreLeftAlone() {
        FakeFlags f = new FakeFlags(40, 80);
        StartupHeap heap = new StartupHeap(f);

        heap.generous();

        assertThat(heap.tight()).isFalse();
        assertThat(f.changes).isEmpty();
    }

    @Test
    void onlyTheLowerRatioIsRaised() {
        FakeFlags f = new FakeFlags(50, 60);
        StartupHeap heap = new StartupHeap(f);

        heap.generous();
        assertThat(f.values).containsEntry(StartupHeap.MIN, 50).containsEntry(StartupHeap.MAX, 70);
        heap.tight();

        assertThat(f.values).containsEntry(StartupHeap.MIN, 50).containsEntry(StartupHeap.MAX, 60);
    }

    @Test
    void aRefusedChangeLeavesNothingToPutBack() {
        StartupHeap heap = new StartupHeap(new StartupHeap.Flags() {
            @Override
            public int get(String name) {
                return 5;
            }

            @Override
            public void set(String name, int value) {
                throw new IllegalArgumentException("flag " + name + " is not writeable");
            }
        });

        heap.generous();

        assertThat(heap.tight()).isFalse();
    }

    @Test
    void thisJvmHasTheModuleAndItsFlagsCanBeRead() {
        // the build's JDK has jdk.management; reading (not changing) this JVM's flags
        assertThat(StartupHeap.ofThisJvm()).isPresent();
    }
}
