package org.jflannel.subnet.kube;

import org.jflannel.core.LeaseEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Node callbacks → lease events, without an API server. */
class LeaseTrackerTest {

    private static final KubeAnnotations K = KubeFixture.KEYS;
    private final LeaseTracker tracker = new LeaseTracker("me", new NodeLeases(K, true, false));
    private final List<LeaseEvent> events = new ArrayList<>();

    private static NodeView node(String name, int i, String mac) {
        return new NodeView(name, "10.244." + i + ".0/24", List.of(), KubeFixture.upstreamAnnotations("192.0.2." + i,
                "{\"VNI\":1,\"VtepMAC\":\"" + mac + "\"}"));
    }

    private void subscribe(List<NodeView> cache) {
        tracker.subscribe(100, b -> {
            synchronized (events) {
                events.addAll(b);
                events.notifyAll();
            }
        }, () -> cache);
    }

    private List<String> awaitEvents(int n) throws InterruptedException {
        Waits.until(() -> {
            synchronized (events) {
                return events.size() >= n ? true : null;
            }
        }, n + " events");
        synchronized (events) {
            return events.stream().map(e -> e.type() + " " + e.lease().key()).toList();
        }
    }

    @AfterEach
    void close() {
        tracker.close();
    }

    @Test
    void snapshotThenAddUpdateDeleteInOrderAndTheOwnNodeNever() throws Exception {
        subscribe(List.of(node("a", 2, "0e:00:00:00:00:02"), node("me", 1, "0e:00:00:00:00:01")));

        tracker.added(node("b", 3, "0e:00:00:00:00:03"));
        tracker.updated(node("b", 3, "0e:00:00:00:00:03"), node("b", 3, "0e:00:00:00:00:33"));
        tracker.updated(node("me", 1, "0e:00:00:00:00:01"), node("me", 1, "0e:00:00:00:00:11"));
        tracker.updated(node("b", 3, "0e:00:00:00:00:33"), node("b", 3, "0e:00:00:00:00:33")); // resync: no event
        tracker.deleted(node("me", 1, "0e:00:00:00:00:11"));
        tracker.deleted(node("b", 3, "0e:00:00:00:00:33"));

        assertThat(awaitEvents(4)).containsExactly(
                "ADDED 10.244.2.0-24", "ADDED 10.244.3.0-24", "ADDED 10.244.3.0-24", "REMOVED 10.244.3.0-24");
    }

    @Test
    void deletionOfANodeNeverAnnouncedIsRemovedFromItsLastStateAndAnUnmanagedOneIgnored() throws Exception {
        subscribe(List.of());
        Map<String, String> unmanaged = new HashMap<>(node("u", 5, "0e:00:00:00:00:05").annotations());
        unmanaged.remove(K.subnetKubeManaged());

        tracker.deleted(new NodeView("u", "10.244.5.0/24", List.of(), unmanaged));
        tracker.deleted(node("gone", 4, "0e:00:00:00:00:04")); // e.g. a tombstone for a node the cache missed

        assertThat(awaitEvents(1)).containsExactly("REMOVED 10.244.4.0-24");
    }

    @Test
    void aMalformedNodeIsSkippedAndTheNextStillFlows() throws Exception {
        subscribe(List.of());
        Map<String, String> bad = new HashMap<>(node("bad", 6, "x").annotations());
        bad.remove(K.publicIp());

        tracker.added(new NodeView("bad", "10.244.6.0/24", List.of(), bad));
        tracker.added(node("good", 7, "0e:00:00:00:00:07"));

        assertThat(awaitEvents(1)).containsExactly("ADDED 10.244.7.0-24");
    }

    @Test
    void aSecondSubscriberIsRefused() {
        subscribe(List.of());

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> subscribe(List.of()))
                .isInstanceOf(IllegalStateException.class);
    }
}
