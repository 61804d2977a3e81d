package org.jflannel.subnet.etcd;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.CompactOption;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Plays the cluster admin and the upstream nodes in tests: writes etcd keys and values exactly as
 * upstream flanneld (or an operator with etcdctl) does, through its own jetcd client.
 */
final class EtcdAdmin implements AutoCloseable {
    /** Upstream's lease value for a vxlan node (REFERENCE §5.2), written literally, not by our codec. */
    static String upstreamValue(String publicIp, String backendData) {
        return "{\"PublicIP\":\"" + publicIp + "\",\"PublicIPv6\":null,\"BackendType\":\"vxlan\",\"BackendData\":"
                + backendData + "}";
    }

    static final EtcdTimings TIMINGS = new EtcdTimings(Duration.ofHours(24), Duration.ofMinutes(60),
            Duration.ofSeconds(1), Duration.ofMillis(100), Duration.ofSeconds(5), Duration.ofSeconds(5));

    private final Client client;
    private final EtcdStore store;
    final String prefix;

    EtcdAdmin(String endpoint, String prefix) {
        this.client = Client.builder().endpoints(endpoint).build();
        this.store = new EtcdStore(client, Duration.ofSeconds(10));
        this.prefix = prefix;
    }

    EtcdStore store() {
        return store;
    }

    EtcdOptions options(String endpoint) {
        return EtcdOptions.of(java.util.List.of(endpoint), prefix);
    }

    String key(String leaseKey) {
        return prefix + "/subnets/" + leaseKey;
    }

    void putConfig(String json) throws Exception {
        store.put(prefix + "/config", json, 0);
    }

    /** Puts {@code key} with a 24 h etcd lease, as upstream's create does. */
    void putLeased(String key, String value) throws Exception {
        store.put(key, value, store.grant(Duration.ofHours(24)));
    }

    /** Puts {@code key} without a lease: a reservation, or an operator's manual write. */
    void putPlain(String key, String value) throws Exception {
        store.put(key, value, 0);
    }

    void delete(String key) throws Exception {
        store.delete(key);
    }

    Optional<EtcdStore.Entry> get(String key) throws Exception {
        return store.get(key);
    }

    /** Revokes the etcd lease holding {@code key}: etcd deletes the key, exactly as on TTL expiry. */
    void expire(String key) throws Exception {
        store.revoke(get(key).orElseThrow().leaseId());
    }

    java.util.List<String> listKeys() throws Exception {
        return store.list(prefix + "/subnets/").entries().stream().map(EtcdStore.Entry::key).toList();
    }

    /** Seconds left on an etcd lease, -1 once it has expired. */
    long ttl(long leaseId) throws Exception {
        return store.ttlAsync(leaseId).get(10, TimeUnit.SECONDS);
    }

    long revision() throws Exception {
        return store.list(prefix + "/").revision();
    }

    void compact(long revision) throws Exception {
        client.getKVClient().compact(revision, CompactOption.newBuilder().withCompactPhysical(true).build())
                .get(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        client.close();
    }
}
