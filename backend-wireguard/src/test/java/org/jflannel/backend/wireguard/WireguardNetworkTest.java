package org.jflannel.backend.wireguard;

import static org.assertj.core.api.Assertions.assertThat;

import java.security.SecureRandom;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import org.jflannel.backend.wireguard.crypto.X25519;
import org.jflannel.backend.wireguard.protocol.AllowedIp;
import org.jflannel.backend.wireguard.protocol.Device;
import org.jflannel.backend.wireguard.protocol.Endpoint;
import org.jflannel.backend.wireguard.protocol.Peer;
import org.jflannel.backend.wireguard.protocol.Timings;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.junit.jupiter.api.Test;

/** Peers from leases (upstream's handleSubnetEvents) and the lease's backend data, without a kernel. */
class WireguardNetworkTest {
    private static final SecureRandom RANDOM = new SecureRandom();
    private final byte[] psk = new byte[32];
    private final Device device = new Device(new Device.Config(X25519.generatePrivate(RANDOM), Timings.standard(), System::nanoTime,
            Instant::now, RANDOM, 1420, () -> false, () -> { }), new Device.Wire() {
                @Override
                public void send(byte[] d, int off, int len, Endpoint to) {
                }

                @Override
                public void deliver(byte[] p, int off, int len) {
                }
            });
    private final WireguardNetwork network = single(
            new Lease(Ip4Net.parse("10.244.1.0/24"), null, new LeaseAttrs(null, null, "wireguard", null, null), null),
            new BackendConfig.Wireguard(51820, 51821, 0, psk, 25, BackendConfig.WireguardMode.SEPARATE), device);

    /** An IPv4 network of one device, flannel-wg, without packet threads. */
    static WireguardNetwork single(Lease own, BackendConfig.Wireguard cfg, Device device) {
        WgLayout layout = new WgLayout(cfg.mode(), List.of(new WgLayout.Spec(WireguardBackend.DEVICE, cfg.listenPort(),
                Ip4Net.toInet(Ip4Net.parseAddress("192.0.2.1")), true, false)));
        return new WireguardNetwork(own, 1420, device.publicKey(),
                new WireguardPeers(java.util.Map.of(WireguardBackend.DEVICE, PeerTable.userspace(device)), layout, cfg, null, null),
                List.of(WireguardNetwork.Plane.userspace(WireguardBackend.DEVICE, device, null)));
    }

    private static Lease lease(String subnet, String ip, String type, String data) {
        return new Lease(Ip4Net.parse(subnet), null, new LeaseAttrs(Ip4Net.toInet(Ip4Net.parseAddress(ip)), null, type, data, null), null);
    }

    private static String data(byte[] key, Integer port) {
        return "{\"PublicKey\":\"" + Base64.getEncoder().encodeToString(key) + "\"" + (port == null ? "" : ",\"Port\":" + port) + "}";
    }

    @Test
    void aLeaseBecomesAPeerWithEndpointAllowedIpsAndKeepalive() {
        byte[] k = X25519.publicKey(X25519.generatePrivate(RANDOM));
        network.apply(List.of(LeaseEvent.added(lease("10.244.2.0/24", "192.0.2.2", "wireguard", data(k, 6000)))));
        Peer p = device.peer(k).orElseThrow();
        assertThat(p.endpoint()).isEqualTo(new Endpoint(Ip4Net.parseAddress("192.0.2.2"), 6000));
        assertThat(p.allowedIps()).containsExactly(new AllowedIp(Ip4Net.parseAddress("10.244.2.0"), 24));
        assertThat(device.route(Ip4Net.parseAddress("10.244.2.77"))).isSameAs(p);
    }

    @Test
    void aPeerNoLeaseWantsGoesWithTheFirstCompleteListAndAPeerTheDeviceLostIsSetAgain() {
        // a device that held peers before the first lease list (kernel mode: a leftover adopted from a killed run)
        byte[] gone = X25519.publicKey(X25519.generatePrivate(RANDOM));
        device.setPeer(gone, psk, new Endpoint(Ip4Net.parseAddress("192.0.2.9"), 51820),
                List.of(new AllowedIp(Ip4Net.parseAddress("10.244.9.0"), 24)), 0);
        byte[] k = X25519.publicKey(X25519.generatePrivate(RANDOM));
        device.setPeer(k, psk, new Endpoint(Ip4Net.parseAddress("192.0.2.2"), 51820),
                List.of(new AllowedIp(Ip4Net.parseAddress("10.244.2.0"), 24)), 0);
        Peer kept = device.peer(k).orElseThrow();

        network.apply(List.of(LeaseEvent.added(lease("10.244.2.0/24", "192.0.2.2", "wireguard", data(k, 51820)))));
        assertThat(device.peer(gone)).as("the peer of a node that left while we were down").isEmpty();
        assertThat(device.route(Ip4Net.parseAddress("10.244.9.1"))).isNull();
        assertThat(device.peer(k).orElseThrow()).as("a wanted peer updated in place, its sessions kept").isSameAs(kept);

        device.removePeer(k); // lost (kernel mode: someone ran wg set ... remove)
        byte[] stranger = X25519.publicKey(X25519.generatePrivate(RANDOM));
        device.setPeer(stranger, psk, new Endpoint(Ip4Net.parseAddress("192.0.2.8"), 51820),
                List.of(new AllowedIp(Ip4Net.parseAddress("10.244.8.0"), 24)), 0);
        network.reconcile();
        assertThat(device.peer(k)).as("set again from its lease").isPresent();
        assertThat(device.route(Ip4Net.parseAddress("10.244.2.1"))).isSameAs(device.peer(k).orElseThrow());
        assertThat(device.peer(stranger)).as("a peer no lease wants").isEmpty();
        assertThat(network.peers()).isEqualTo(1);
    }

    @Test
    void withoutAPortTheEndpointUsesOurListenPort() {
        byte[] k = X25519.publicKey(X25519.generatePrivate(RANDOM));
        network.apply(List.of(LeaseEvent.added(lease("10.244.2.0/24", "192.0.2.2", "wireguard", data(k, null)))));
        assertThat(device.peer(k).orElseThrow().endpoint().port()).isEqualTo(51820);
    }

    @Test
    void aChangedKeyReplacesThePeerAndRemovalForgetsIt() {
        byte[] k1 = X25519.publicKey(X25519.generatePrivate(RANDOM));
        byte[] k2 = X25519.publicKey(X25519.generatePrivate(RANDOM));
        network.apply(List.of(LeaseEvent.added(lease("10.244.2.0/24", "192.0.2.2", "wireguard", data(k1, 51820)))));
        network.apply(List.of(LeaseEvent.added(lease("10.244.2.0/24", "192.0.2.2", "wireguard", data(k2, 51820)))));
        assertThat(device.peer(k1)).isEmpty();
        assertThat(device.route(Ip4Net.parseAddress("10.244.2.1"))).isSameAs(device.peer(k2).orElseThrow());
        network.apply(List.of(LeaseEvent.removed(lease("10.244.2.0/24", "192.0.2.2", "wireguard", data(k2, 51820)))));
        assertThat(network.peers()).isZero();
        assertThat(device.route(Ip4Net.parseAddress("10.244.2.1"))).isNull();
    }

    @Test
    void aNewEndpointForTheSameKeyUpdatesThePeerInPlaceKeepingItsSessions() {
        byte[] k = X25519.publicKey(X25519.generatePrivate(RANDOM));
        network.apply(List.of(LeaseEvent.added(lease("10.244.2.0/24", "192.0.2.2", "wireguard", data(k, 6000)))));
        Peer before = device.peer(k).orElseThrow();
        network.apply(List.of(LeaseEvent.added(lease("10.244.2.0/24", "192.0.2.22", "wireguard", data(k, 6001)))));
        assertThat(device.peer(k).orElseThrow()).as("updated as wg set does, not removed and added again").isSameAs(before);
        assertThat(before.endpoint()).isEqualTo(new Endpoint(Ip4Net.parseAddress("192.0.2.22"), 6001));
        assertThat(network.peers()).isEqualTo(1);
    }

    @Test
    void aLeaseWhoseDataTurnsUnusableLeavesItsPeerAsUpstreamDoes() {
        byte[] k = X25519.publicKey(X25519.generatePrivate(RANDOM));
        network.apply(List.of(LeaseEvent.added(lease("10.244.2.0/24", "192.0.2.2", "wireguard", data(k, 6000)))));
        network.apply(List.of(LeaseEvent.added(lease("10.244.2.0/24", "192.0.2.2", "wireguard", "{\"PublicKey\":\"short\"}"))));
        assertThat(device.peer(k)).isPresent();
        assertThat(device.route(Ip4Net.parseAddress("10.244.2.1"))).isSameAs(device.peer(k).orElseThrow());
        network.reconcile();
        assertThat(device.peer(k)).as("still wanted: not a stray for the read-back").isPresent();
        network.apply(List.of(LeaseEvent.removed(lease("10.244.2.0/24", "192.0.2.2", "wireguard", "{\"PublicKey\":\"short\"}"))));
        assertThat(device.peer(k)).as("gone with its lease").isEmpty();
    }

    @Test
    void aKeptPeerWhoseLeaseComesBackUnderANewKeyGoesAtTheNextReconcile() {
        byte[] k1 = X25519.publicKey(X25519.generatePrivate(RANDOM));
        byte[] k2 = X25519.publicKey(X25519.generatePrivate(RANDOM));
        network.apply(List.of(LeaseEvent.added(lease("10.244.2.0/24", "192.0.2.2", "wireguard", data(k1, 6000)))));
        network.apply(List.of(LeaseEvent.added(lease("10.244.2.0/24", "192.0.2.2", "wireguard", "{\"PublicKey\":\"short\"}"))));
        network.apply(List.of(LeaseEvent.added(lease("10.244.2.0/24", "192.0.2.2", "wireguard", data(k2, 6000)))));
        network.reconcile();
        assertThat(device.peer(k1)).as("the key its lease no longer names").isEmpty();
        assertThat(device.route(Ip4Net.parseAddress("10.244.2.1"))).isSameAs(device.peer(k2).orElseThrow());
    }

    @Test
    void otherBackendsAndUnusableDataAreSkippedWithoutHarmingTheOthers() {
        byte[] k = X25519.publicKey(X25519.generatePrivate(RANDOM));
        network.apply(List.of(
                LeaseEvent.added(lease("10.244.3.0/24", "192.0.2.3", "vxlan", "{\"VNI\":1}")),
                LeaseEvent.added(lease("10.244.4.0/24", "192.0.2.4", "wireguard", "{\"PublicKey\":\"short\"}")),
                LeaseEvent.added(lease("10.244.5.0/24", "192.0.2.5", "wireguard", null)),
                LeaseEvent.added(lease("10.244.6.0/24", "192.0.2.6", "wireguard", "{\"PublicKey\":\"" + Base64.getEncoder().encodeToString(new byte[32]) + "\"}")),
                LeaseEvent.added(lease("10.244.2.0/24", "192.0.2.2", "wireguard", data(k, 51820)))));
        assertThat(network.peers()).isEqualTo(1); // the all-zero key has small order: refused, logged
    }

    @Test
    void ourBackendDataIsUpstreamsAndPeersAreReadCaseInsensitively() {
        byte[] k = new byte[32];
        k[1] = 5;
        String json = new WireguardLeaseData(k, 51820).toJson();
        assertThat(json).isEqualTo("{\"PublicKey\":\"" + Base64.getEncoder().encodeToString(k) + "\",\"Port\":51820}");
        assertThat(WireguardLeaseData.parse("{\"publickey\":\"" + Base64.getEncoder().encodeToString(k) + "\",\"port\":7}"))
                .hasValueSatisfying(d -> {
                    assertThat(d.publicKey()).isEqualTo(k);
                    assertThat(d.port()).isEqualTo(7);
                });
        assertThat(WireguardLeaseData.parse("[]")).isEmpty();
        assertThat(WireguardLeaseData.parse("{\"PublicKey\":\"" + Base64.getEncoder().encodeToString(k) + "\",\"Port\":70000}")).isEmpty();
    }
}
