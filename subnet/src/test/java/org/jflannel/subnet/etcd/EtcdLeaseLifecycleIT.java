package org.jflannel.subnet.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.NetConf;
import org.jflannel.testsupport.etcd.EtcdExtension;
import org.jflannel.testsupport.etcd.EtcdProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Acquisition order, reservations, renewal and revocation of the own lease, against a real etcd. */
@Tag("etcd")
@ExtendWith(EtcdExtension.class)
class EtcdLeaseLifecycleIT {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private final EtcdProcess etcd;
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private EtcdAdmin admin;

    EtcdLeaseLifecycleIT(EtcdProcess etcd) {
        this.etcd = etcd;
    }

    @BeforeEach
    void setUp() throws Exception {
        admin = new EtcdAdmin(etcd.endpoint(), "/jf-" + UUID.randomUUID());
        admin.putConfig(EtcdSubnetManagerContractIT.CONFIG);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        admin.close();
    }

    @Test
    void reservationIsReusedByItsNodeAndKeepsNoTtl() throws Exception {
        String key = admin.key("10.42.50.0-24");
        admin.putPlain(key, EtcdAdmin.upstreamValue("192.0.2.10", "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:99\"}"));
        LeaseAttrs ours = EtcdFaultsIT.attrs("192.0.2.10", "0e:00:00:00:00:10");

        Lease lease = manager(null, EtcdAdmin.TIMINGS, () -> { }).acquireLease(ours);

        assertThat(lease.subnet()).isEqualTo(Ip4Net.parse("10.42.50.0/24"));
        assertThat(lease.expiration()).isNull();
        EtcdStore.Entry stored = admin.get(key).orElseThrow();
        assertThat(stored.leaseId()).as("a reservation is never given a TTL").isZero();
        assertThat(stored.value()).isEqualTo(LeaseValueCodec.format(ours));
        assertThat(admin.listKeys()).containsExactly(key);
    }

    /**
     * Ours: in dual stack a lease key names both subnets, so two nodes that listed before either created its key
     * can choose one IPv6 subnet with two IPv4 ones and both create their keys (upstream's race; it broke a CI run's
     * dual-stack cluster, two nodes on one IPv6 /64). Here the other node's key, on the very IPv6 subnet we are
     * about to reuse, appears after our listing (taken ahead) and before our creation: we must see it after creating
     * ours, delete ours and choose again.
     */
    @Test
    void inDualStackTheLaterOfTwoKeysOnOneIpv6SubnetChoosesAgain() throws Exception {
        String dual = "{\"Network\":\"10.42.0.0/16\",\"EnableIPv6\":true,\"IPv6Network\":\"fd00:42::/56\",\"Backend\":{\"Type\":\"vxlan\"}}";
        admin.putConfig(dual);
        Ip4Net previous4 = Ip4Net.parse("10.42.7.0/24");
        Ip6Net contested = Ip6Net.parse("fd00:42:0:7::/64");
        LeaseAcquirer acquirer = new LeaseAcquirer(admin.store(), admin.options(etcd.endpoint()), EtcdAdmin.TIMINGS,
                Clock.systemUTC(), new SplittableRandom(7), previous4, contested);
        acquirer.listAhead().get(10, TimeUnit.SECONDS);
        String earlier = admin.key(LeaseKeyCodec.format(Ip4Net.parse("10.42.9.0/24"), contested));
        admin.putPlain(earlier, EtcdAdmin.upstreamValue("192.0.2.99", "{}"));

        LeaseAcquirer.Acquired acquired = acquirer.acquire(NetConf.parse(dual, NetConf.Mode.ETCD),
                EtcdFaultsIT.attrs("192.0.2.10", "0e:00:00:00:00:10"));

        assertThat(acquired.lease().ipv6Subnet()).isNotEqualTo(contested);
        assertThat(admin.listKeys()).containsExactlyInAnyOrder(earlier, acquired.key())
                .doesNotContain(admin.key(LeaseKeyCodec.format(previous4, contested)));
    }

    @Test
    void anotherNodesReservationIsNeverTaken() throws Exception {
        // 10.9.0.0/28 in /30s: subnets .4, .8 and .12 are allocatable; .4 and .12 are reserved for others
        admin.putConfig("{\"Network\":\"10.9.0.0/28\",\"SubnetLen\":30,\"Backend\":{\"Type\":\"vxlan\"}}");
        admin.putPlain(admin.key("10.9.0.4-30"), EtcdAdmin.upstreamValue("192.0.2.4", "{}"));
        admin.putPlain(admin.key("10.9.0.12-30"), EtcdAdmin.upstreamValue("192.0.2.12", "{}"));

        Lease lease = manager(null, EtcdAdmin.TIMINGS, () -> { }).acquireLease(EtcdFaultsIT.attrs("192.0.2.10", "0e:00:00:00:00:10"));
        assertThat(lease.subnet()).isEqualTo(Ip4Net.parse("10.9.0.8/30"));

        EtcdSubnetManager another = manager(null, EtcdAdmin.TIMINGS, () -> { });
        assertThatThrownBy(() -> another.acquireLease(EtcdFaultsIT.attrs("192.0.2.11", "0e:00:00:00:00:11")))
                .isInstanceOf(IOException.class).hasMessage("out of subnets");
    }

    @Test
    void incompatibleReservationIsNeitherUsedNorDeleted() throws Exception {
        String reservation = admin.key("10.43.5.0-24"); // outside Network 10.42.0.0/16
        admin.putPlain(reservation, EtcdAdmin.upstreamValue("192.0.2.10", "{}"));
        Lease lease = manager(null, EtcdAdmin.TIMINGS, () -> { }).acquireLease(EtcdFaultsIT.attrs("192.0.2.10", "0e:00:00:00:00:10"));
        assertThat(Ip4Net.parse("10.42.0.0/16").contains(lease.subnet())).isTrue();
        assertThat(admin.get(reservation)).isPresent();
    }

    @Test
    void previousSubnetFromSubnetEnvIsReusedWhenFree() throws Exception {
        Ip4Net previous = Ip4Net.parse("10.42.77.0/24");
        Lease lease = manager(previous, EtcdAdmin.TIMINGS, () -> { }).acquireLease(EtcdFaultsIT.attrs("192.0.2.10", "0e:00:00:00:00:10"));
        assertThat(lease.subnet()).isEqualTo(previous);
        assertThat(admin.get(admin.key("10.42.77.0-24")).orElseThrow().leaseId()).isNotZero();
    }

    @Test
    void incompatibleOwnLeaseIsDeletedAndReplaced() throws Exception {
        String stale = admin.key("10.43.1.0-24"); // outside Network 10.42.0.0/16
        admin.putLeased(stale, EtcdAdmin.upstreamValue("192.0.2.10", "{}"));
        Lease lease = manager(null, EtcdAdmin.TIMINGS, () -> { }).acquireLease(EtcdFaultsIT.attrs("192.0.2.10", "0e:00:00:00:00:10"));
        assertThat(Ip4Net.parse("10.42.0.0/16").contains(lease.subnet())).isTrue();
        assertThat(admin.get(stale)).isEmpty();
    }

    @Test
    void dualStackLeaseGetsAnUpstreamDualKeyAndIsWatchedWithBothSubnets() throws Exception {
        admin.putConfig("{\"Network\":\"10.42.0.0/16\",\"EnableIPv6\":true,\"IPv6Network\":\"fc00:42::/56\","
                + "\"Backend\":{\"Type\":\"vxlan\"}}");
        LeaseAttrs v4 = EtcdFaultsIT.attrs("192.0.2.10", "0e:00:00:00:00:10");
        LeaseAttrs ours = new LeaseAttrs(v4.publicIp(), (java.net.Inet6Address) java.net.InetAddress.getByName("fd00::10"),
                "vxlan", v4.backendData(), "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:16\"}");
        EtcdSubnetManager m = manager(null, EtcdAdmin.TIMINGS, () -> { });
        Lease lease = m.acquireLease(ours);

        assertThat(lease.ipv6Subnet()).isNotNull();
        assertThat(lease.ipv6Subnet().prefixLength()).isEqualTo(64);
        String key = admin.key(lease.key());
        assertThat(LeaseKeyCodec.KEY.matcher(key).find()).isTrue();
        assertThat(key).contains("&fc00:42:");
        assertThat(admin.get(key).orElseThrow().value()).isEqualTo(LeaseValueCodec.format(ours));

        org.jflannel.subnet.SubnetManagerContract.Recorder rec = new org.jflannel.subnet.SubnetManagerContract.Recorder();
        toClose.add(m.watchLeases(rec));
        assertThat(rec.awaitBatches(1).get(0)).singleElement()
                .satisfies(e -> assertThat(e.lease().sameSubnets(lease)).isTrue())
                .satisfies(e -> assertThat(e.lease().attrs()).isEqualTo(ours));
    }

    /**
     * Peers' expirations are never used, so the listing must not ask etcd for them: counted on etcd's
     * own gRPC metrics, the 30-peer snapshot costs no TimeToLive call (at most one, for the own
     * lease's watch listing, which may run meanwhile). Upstream's way made it 31 calls.
     */
    @Test
    void peerSnapshotReadsNoTtls() throws Exception {
        for (int i = 1; i <= 30; i++) {
            admin.putLeased(admin.key("10.42." + i + ".0-24"),
                    EtcdAdmin.upstreamValue("192.0.2." + i, "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:01\"}"));
        }
        EtcdSubnetManager m = manager(null, EtcdAdmin.TIMINGS, () -> { });
        m.acquireLease(EtcdFaultsIT.attrs("192.0.2.200", "0e:00:00:00:00:10"));
        long before = ttlCalls();

        org.jflannel.subnet.SubnetManagerContract.Recorder rec = new org.jflannel.subnet.SubnetManagerContract.Recorder();
        toClose.add(m.watchLeases(rec));

        assertThat(rec.awaitBatches(1).get(0)).hasSize(31)
                .allSatisfy(e -> assertThat(e.lease().expiration()).isNotNull());
        assertThat(ttlCalls() - before).isLessThanOrEqualTo(1);
    }

    /**
     * Ours (issue 23): the first watch starts from the listing made as soon as the own lease was written
     * ({@link WatchPrefetch}), on a client connected ahead, and resumes after that listing's revision. A peer
     * written after that listing and before the subscription is therefore not in the snapshot (which a listing
     * made at subscription would hold) but follows it as the next batch: nothing missed, nothing twice.
     */
    @Test
    void firstWatchStartsFromTheListingMadeAtAcquisitionAndMissesNothingSince() throws Exception {
        EtcdSubnetManager m = manager(null, EtcdAdmin.TIMINGS, () -> { });
        Lease own = m.acquireLease(EtcdFaultsIT.attrs("192.0.2.10", "0e:00:00:00:00:10"));
        Await.until(() -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.getName().equals("etcd-watch-prefetch")), WAIT, "the prefetch listed");
        String peerKey = admin.key("10.42.200.0-24");
        admin.putLeased(peerKey, EtcdAdmin.upstreamValue("192.0.2.20", "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:20\"}"));

        org.jflannel.subnet.SubnetManagerContract.Recorder rec = new org.jflannel.subnet.SubnetManagerContract.Recorder();
        toClose.add(m.watchLeases(rec));

        List<List<org.jflannel.core.LeaseEvent>> batches = rec.awaitBatches(2);
        assertThat(batches.get(0)).as("the snapshot: the listing made right after the own lease was written")
                .singleElement().satisfies(e -> assertThat(e.lease().sameSubnets(own)).isTrue());
        assertThat(batches.get(1)).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo(org.jflannel.core.LeaseEvent.Type.ADDED);
            assertThat(e.lease().subnet()).isEqualTo(Ip4Net.parse("10.42.200.0/24"));
        });
        assertThat(rec.threadNames()).containsExactly("etcd-lease-watch");
    }

    /** LeaseTimeToLive calls etcd has started, from its Prometheus endpoint on the client port. */
    private long ttlCalls() throws Exception {
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(etcd.endpoint() + "/metrics")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        long n = 0;
        for (String line : r.body().split("\n")) {
            if (line.startsWith("grpc_server_started_total{") && line.contains("grpc_method=\"LeaseTimeToLive\"")) {
                n += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return n;
    }

    @Test
    void leaseIsRenewedBeforeItExpires() throws Exception {
        // a renewal every second (TTL - margin), each with 7 s to finish (get, grant, put) before the etcd lease it
        // replaces expires: a loaded CI machine can take seconds over them, and a lease lost then is not what this checks
        EtcdTimings shortLease = new EtcdTimings(Duration.ofSeconds(8), Duration.ofSeconds(7), Duration.ofSeconds(1),
                Duration.ofMillis(100), Duration.ofSeconds(1), Duration.ofSeconds(5));
        CountDownLatch lost = new CountDownLatch(1);
        Lease lease = manager(null, shortLease, lost::countDown).acquireLease(EtcdFaultsIT.attrs("192.0.2.10", "0e:00:00:00:00:10"));
        String key = admin.key(LeaseKeyCodec.format(lease.subnet(), null));
        long firstLeaseId = admin.get(key).orElseThrow().leaseId();

        // renewal at expiry - margin = 1 s after each grant: three renewals, each a new etcd lease on the key
        List<Long> ids = new ArrayList<>(List.of(firstLeaseId));
        Await.until(() -> {
            long id = admin.get(key).orElseThrow().leaseId();
            if (id != ids.get(ids.size() - 1)) {
                ids.add(id);
            }
            return ids.size() >= 4;
        }, WAIT, "three renewals of " + key);
        assertThat(admin.get(key)).isPresent();
        assertThat(lost.getCount()).as("the lease was never lost").isEqualTo(1);
    }

    @Test
    void ownLeaseTurnedIntoAReservationIsNoLongerRenewed() throws Exception {
        // first renewal 3 s after acquisition: the conversion below lands well before it
        EtcdTimings shortLease = new EtcdTimings(Duration.ofSeconds(6), Duration.ofSeconds(3), Duration.ofSeconds(1),
                Duration.ofMillis(100), Duration.ofSeconds(1), Duration.ofSeconds(5));
        CountDownLatch lost = new CountDownLatch(1);
        Lease lease = manager(null, shortLease, lost::countDown).acquireLease(EtcdFaultsIT.attrs("192.0.2.10", "0e:00:00:00:00:10"));
        String key = admin.key(LeaseKeyCodec.format(lease.subnet(), null));
        EtcdStore.Entry leased = admin.get(key).orElseThrow();

        admin.putPlain(key, leased.value()); // the operator's way: put the same value without a lease
        // by the time the etcd lease held before the conversion has expired, the renewal due 3 s after
        // acquisition would have put a lease back on the key
        Await.until(() -> admin.ttl(leased.leaseId()) < 0, WAIT, "the pre-conversion etcd lease expired");
        assertThat(admin.get(key).orElseThrow().leaseId()).isZero();
        assertThat(lost.getCount()).isEqualTo(1);
    }

    @Test
    void deletedOwnLeaseCallsTheRevocationCallback() throws Exception {
        CountDownLatch lost = new CountDownLatch(1);
        Lease lease = manager(null, EtcdAdmin.TIMINGS, lost::countDown).acquireLease(EtcdFaultsIT.attrs("192.0.2.10", "0e:00:00:00:00:10"));
        admin.delete(admin.key(LeaseKeyCodec.format(lease.subnet(), null)));
        assertThat(lost.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void expiredOwnLeaseCallsTheRevocationCallback() throws Exception {
        CountDownLatch lost = new CountDownLatch(1);
        Lease lease = manager(null, EtcdAdmin.TIMINGS, lost::countDown).acquireLease(EtcdFaultsIT.attrs("192.0.2.10", "0e:00:00:00:00:10"));
        admin.expire(admin.key(LeaseKeyCodec.format(lease.subnet(), null)));
        assertThat(lost.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void missingConfigGivesUpstreamsMessage() throws Exception {
        admin.delete(admin.prefix + "/config");
        assertThatThrownBy(() -> manager(null, EtcdAdmin.TIMINGS, () -> { }).networkConfig())
                .isInstanceOf(IOException.class)
                .hasMessage("flannel config not found in etcd store. Did you create your config using etcdv3 API?");
    }

    private EtcdSubnetManager manager(Ip4Net previous, EtcdTimings timings, Runnable onLost) throws Exception {
        EtcdSubnetManager m = new EtcdSubnetManager(admin.options(etcd.endpoint()), previous, null, timings, onLost);
        toClose.add(m);
        return m;
    }
}
