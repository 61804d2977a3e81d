package org.jflannel.subnet.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The etcd operations the lease source needs, over one jetcd {@link Client}, each bounded by a
 * timeout and failing with an {@link IOException} that names the operation and the key.
 */
final class EtcdStore implements AutoCloseable {
    /** One key as read: value as UTF-8 text, its etcd lease (0 = none), the revisions that created it and last changed it. */
    record Entry(String key, String value, long leaseId, long createRevision, long modRevision) {
        static Entry of(KeyValue kv) {
            return new Entry(text(kv.getKey()), text(kv.getValue()), kv.getLease(), kv.getCreateRevision(), kv.getModRevision());
        }
    }

    /** All keys under a prefix as of {@code revision}. */
    record Listing(long revision, List<Entry> entries) {
        Listing {
            entries = List.copyOf(entries);
        }
    }

    private volatile Client client;
    private final Duration timeout;
    /** How to build a new client for {@link #reconnect()}; null for a store on a client given by the caller. */
    private final EtcdOptions options;
    /** Whether its clients fail calls at once while they cannot connect (see {@link EtcdClients#connect}). */
    private final boolean failFast;

    EtcdStore(Client client, Duration timeout) {
        this(client, timeout, null, false);
    }

    private EtcdStore(Client client, Duration timeout, EtcdOptions options, boolean failFast) {
        this.client = client;
        this.timeout = timeout;
        this.options = options;
        this.failFast = failFast;
    }

    Optional<Entry> get(String key) throws IOException, InterruptedException {
        GetResponse r = await(client.getKVClient().get(bytes(key)), "get", key);
        return r.getKvs().isEmpty() ? Optional.empty() : Optional.of(Entry.of(r.getKvs().get(0)));
    }

    Listing list(String prefix) throws IOException, InterruptedException {
        GetOption opt = GetOption.builder().isPrefix(true).build();
        GetResponse r = await(client.getKVClient().get(bytes(prefix), opt), "list", prefix);
        List<Entry> entries = new ArrayList<>(r.getKvs().size());
        for (KeyValue kv : r.getKvs()) {
            entries.add(Entry.of(kv));
        }
        return new Listing(r.getHeader().getRevision(), entries);
    }

    /** Like {@link #list} without the values (each entry's value is empty): etcd's {@code keys_only}. */
    Listing listKeys(String prefix) throws IOException, InterruptedException {
        GetOption opt = GetOption.builder().isPrefix(true).withKeysOnly(true).build();
        GetResponse r = await(client.getKVClient().get(bytes(prefix), opt), "list keys", prefix);
        List<Entry> entries = new ArrayList<>(r.getKvs().size());
        for (KeyValue kv : r.getKvs()) {
            entries.add(Entry.of(kv));
        }
        return new Listing(r.getHeader().getRevision(), entries);
    }

    /** Grants an etcd lease of {@code ttl}; returns its ID. */
    long grant(Duration ttl) throws IOException, InterruptedException {
        return await(client.getLeaseClient().grant(ttl.toSeconds()), "grant", ttl.toSeconds() + "s").getID();
    }

    /** Revokes an etcd lease; failures only matter as a log line (the lease expires anyway). */
    void revoke(long leaseId) throws IOException, InterruptedException {
        await(client.getLeaseClient().revoke(leaseId), "revoke", Long.toHexString(leaseId));
    }

    /** Seconds left on an etcd lease; -1 when it has expired or never existed. */
    CompletableFuture<Long> ttlAsync(long leaseId) {
        return client.getLeaseClient().timeToLive(leaseId, LeaseOption.DEFAULT).thenApply(r -> r.getTTL());
    }

    /** {@code If(Version(key) == 0) Then(Put(key, value, lease))}: true when the key was created. */
    boolean createIfAbsent(String key, String value, long leaseId) throws IOException, InterruptedException {
        Cmp absent = new Cmp(bytes(key), Cmp.Op.EQUAL, CmpTarget.version(0));
        Op put = Op.put(bytes(key), bytes(value), putOption(leaseId));
        return await(client.getKVClient().txn().If(absent).Then(put).commit(), "create", key).isSucceeded();
    }

    /** A plain put; {@code leaseId} 0 stores the key without a TTL. */
    void put(String key, String value, long leaseId) throws IOException, InterruptedException {
        await(client.getKVClient().put(bytes(key), bytes(value), putOption(leaseId)), "put", key);
    }

    void delete(String key) throws IOException, InterruptedException {
        await(client.getKVClient().delete(bytes(key)), "delete", key);
    }

    /**
     * Watches every key under {@code prefix} from {@code revision} on (a leader is required). The
     * listener first gets a "created" response, so that callers can tell a watch that never got
     * established (jetcd reports no error while the server is unreachable).
     */
    Watch.Watcher watch(String prefix, long revision, Watch.Listener listener) {
        WatchOption opt = WatchOption.builder().isPrefix(true).withRevision(revision).withRequireLeader(true)
                .withCreateNotify(true).build();
        return client.getWatchClient().watch(bytes(prefix), opt, listener);
    }

    Duration timeout() {
        return timeout;
    }

    /** Opens a store on a new jetcd client of its own, whose calls wait (up to {@code timeout}) for it to connect. */
    static EtcdStore open(EtcdOptions options, Duration timeout, boolean quiet) throws IOException {
        return new EtcdStore(EtcdClients.connect(options, quiet, false), timeout, options, false);
    }

    /**
     * Opens a store for a watch (ours, session 13): quiet, and its calls, the watch's set-up included, fail at once
     * with {@code UNAVAILABLE} while the client cannot connect (refused, reset), rather than waiting up to
     * {@code timeout} for gRPC's next reconnect: the watch then probes etcd or backs off, on a new client.
     */
    static EtcdStore openFailFast(EtcdOptions options, Duration timeout) throws IOException {
        return new EtcdStore(EtcdClients.connect(options, true, true), timeout, options, true);
    }

    /**
     * Replaces the jetcd client by a new one (ours, issue 23): a gRPC channel that failed to connect waits
     * out its own reconnect back-off (up to 2 min) even after etcd is back; a new channel connects at once.
     * Calls in flight on the old client fail. A store on a caller's client keeps it.
     */
    void reconnect() throws IOException {
        if (options == null) {
            return;
        }
        Client old = client;
        client = EtcdClients.connect(options, true, failFast);
        old.close();
    }

    /** Closes the jetcd client. */
    @Override
    public void close() {
        client.close();
    }

    private static PutOption putOption(long leaseId) {
        return leaseId == 0 ? PutOption.DEFAULT : PutOption.builder().withLeaseId(leaseId).build();
    }

    private <T> T await(CompletableFuture<T> f, String op, String subject) throws IOException, InterruptedException {
        try {
            return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable c = e.getCause() == null ? e : e.getCause();
            throw new IOException("etcd " + op + " " + subject + ": " + c.getMessage(), c);
        } catch (TimeoutException e) {
            f.cancel(true);
            throw new IOException("etcd " + op + " " + subject + ": no answer within " + timeout.toMillis() + " ms", e);
        }
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    static String text(ByteSequence b) {
        return b.toString(StandardCharsets.UTF_8);
    }
}
