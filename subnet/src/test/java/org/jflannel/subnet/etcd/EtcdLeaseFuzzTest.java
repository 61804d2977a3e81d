package org.jflannel.subnet.etcd;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.watch.WatchEvent;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.core.ConfigException;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;

/**
 * What any writer of the etcd prefix can put there. The input is NUL-separated text: for
 * {@link #leaseKeyAndValue} a key and a value; for {@link #leaseWatchEvents} triples of (event type
 * P or D, key, value), the watch path a daemon runs on every change. Properties: a lease or a
 * {@link ConfigException} (a skipped key), never another exception; what parsed survives our own
 * writer and reader unchanged (the raw backend data after the one normalisation Go's encoder makes); the watch path never throws and delivers only well-formed leases.
 */
class EtcdLeaseFuzzTest {

    @FuzzTest(maxDuration = "5m")
    void leaseKeyAndValue(byte[] input) throws ConfigException {
        String[] p = parts(input, 2);
        Lease l;
        try {
            l = EtcdLeases.decode(p[0], p[1], null);
        } catch (ConfigException skip) {
            return;
        }
        if (l.subnet() == null && l.ipv6Subnet() == null) {
            throw new AssertionError("a lease without subnets from key " + p[0]);
        }
        // the backend data is raw JSON that format() writes as Go's encoder does (compacted, <>& escaped), so
        // it is compared after that one normalisation; everything else must come back as it was read
        LeaseAttrs again = LeaseValueCodec.parse(p[0], LeaseValueCodec.format(l.attrs()));
        LeaseAttrs twice = LeaseValueCodec.parse(p[0], LeaseValueCodec.format(again));
        if (!twice.equals(again) || !java.util.Objects.equals(again.publicIp(), l.attrs().publicIp())
                || !java.util.Objects.equals(again.publicIpv6(), l.attrs().publicIpv6())
                || !again.backendType().equals(l.attrs().backendType())
                || (again.backendData() == null) != (l.attrs().backendData() == null || l.attrs().backendData().isEmpty())
                || (again.backendV6Data() == null) != (l.attrs().backendV6Data() == null || l.attrs().backendV6Data().isEmpty())) {
            throw new AssertionError("value round trip: " + l.attrs() + " -> " + again + " -> " + twice);
        }
        LeaseKeyCodec.Subnets s = LeaseKeyCodec.parse(LeaseKeyCodec.format(l.subnet(), l.ipv6Subnet()));
        if (!java.util.Objects.equals(s.ipv4(), l.subnet()) || !java.util.Objects.equals(s.ipv6(), l.ipv6Subnet())) {
            throw new AssertionError("key round trip: " + p[0] + " -> " + s);
        }
    }

    @FuzzTest(maxDuration = "5m")
    void leaseWatchEvents(byte[] input) {
        String[] p = new String(input, StandardCharsets.UTF_8).split("\0", -1);
        List<WatchEvent> events = new ArrayList<>();
        for (int i = 0; i + 2 < p.length && events.size() < 64; i += 3) {
            var kv = io.etcd.jetcd.api.KeyValue.newBuilder()
                    .setKey(ByteString.copyFromUtf8(p[i + 1])).setValue(ByteString.copyFromUtf8(p[i + 2]))
                    .setLease(p[i].length()).build();
            WatchEvent.EventType type = p[i].startsWith("D") ? WatchEvent.EventType.DELETE : WatchEvent.EventType.PUT;
            events.add(new WatchEvent(new KeyValue(kv, ByteSequence.EMPTY), null, type));
        }
        List<Lease> delivered = new ArrayList<>();
        var table = new LeaseTable(new Expirations(() -> null, Clock.systemUTC(), Duration.ofHours(24), false),
                batch -> batch.forEach(e -> delivered.add(e.lease())));
        // the same events twice: a replay after a reconnect
        table.apply(events);
        table.apply(events);
        for (Lease l : delivered) {
            if (l == null || (l.subnet() == null && l.ipv6Subnet() == null) || l.attrs() == null) {
                throw new AssertionError("delivered a malformed lease: " + l);
            }
        }
    }

    static String[] parts(byte[] input, int n) {
        String[] p = new String(input, StandardCharsets.UTF_8).split("\0", n);
        String[] out = new String[n];
        for (int i = 0; i < n; i++) {
            out[i] = i < p.length ? p[i] : "";
        }
        return out;
    }
}
