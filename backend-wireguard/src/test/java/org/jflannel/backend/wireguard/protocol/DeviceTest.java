package org.jflannel.backend.wireguard.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jflannel.backend.wireguard.protocol.Net.ip;
import static org.jflannel.backend.wireguard.protocol.Net.ipv4;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.jflannel.backend.wireguard.crypto.X25519;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two of our devices over {@link Net}: handshake, data both ways, cryptokey routing, replay and
 * forgery drops, PSK, handshake retry, rekey after time and messages, keepalives, cookies under
 * load, roaming. The clock is the test's: timers fire when it advances, never by waiting.
 */
class DeviceTest {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Endpoint EA = new Endpoint(ip(192, 168, 0, 1), 51820);
    private static final Endpoint EB = new Endpoint(ip(192, 168, 0, 2), 51820);
    private static final int A_POD = ip(10, 244, 1, 5);
    private static final int B_POD = ip(10, 244, 2, 5);

    private Net net;
    private byte[] aKey;
    private byte[] bKey;
    private Device a;
    private Device b;

    @BeforeEach
    void setUp() {
        aKey = X25519.generatePrivate(RANDOM);
        bKey = X25519.generatePrivate(RANDOM);
    }

    private void connect(Timings timings, byte[] pskA, byte[] pskB) {
        net = new Net();
        a = net.device(EA, aKey, timings);
        b = net.device(EB, bKey, timings);
        a.setPeer(X25519.publicKey(bKey), pskA, EB, List.of(new AllowedIp(ip(10, 244, 2, 0), 24)), 0);
        b.setPeer(X25519.publicKey(aKey), pskB, EA, List.of(new AllowedIp(ip(10, 244, 1, 0), 24)), 0);
    }

    private void aSends(int payload) {
        byte[] p = ipv4(A_POD, B_POD, payload);
        a.sendPacket(p, 0, p.length);
        net.pump();
    }

    private void bSends(int payload) {
        byte[] p = ipv4(B_POD, A_POD, payload);
        b.sendPacket(p, 0, p.length);
        net.pump();
    }

    @Test
    void handshakeThenDataBothWays() {
        connect(Timings.standard(), null, null);
        aSends(100); // staged, handshake, then sent
        assertThat(net.delivered.get(b)).hasSize(1);
        assertThat(net.delivered.get(b).get(0)).isEqualTo(ipv4(A_POD, B_POD, 100));
        bSends(1380);
        assertThat(net.delivered.get(a)).containsExactly(ipv4(B_POD, A_POD, 1380));
        assertThat(a.counters().handshakesCompleted.sum()).isEqualTo(1);
        assertThat(b.counters().handshakesCompleted.sum()).isEqualTo(1);
        assertThat(net.sentOfType(Messages.INITIATION)).isEqualTo(1);
        // every data datagram is padded to 16 and carries a tag: no inner length leaks beyond that
        assertThat(net.sent.stream().filter(g -> g.type() == Messages.DATA).mapToInt(g -> g.bytes().length - 32))
                .allMatch(n -> n % 16 == 0);
    }

    /**
     * Per-peer stats as wg shows them: every handshake and data message's bytes (data: header, padded payload,
     * tag) counted on the sender when it goes and on the receiver when it is accepted, so A's sent bytes are B's
     * received bytes and back, as the kernel counts; the last handshake is the wall clock when it completed,
     * NEVER before; a replayed message is not counted again, nor a cookie reply.
     */
    @Test
    void peerBytesMatchTheMessagesBothWaysAndTheHandshakeHasItsWallClockTime() {
        connect(Timings.standard(), null, null);
        Peer bOnA = a.peer(X25519.publicKey(bKey)).orElseThrow();
        Peer aOnB = b.peer(X25519.publicKey(aKey)).orElseThrow();
        assertThat(bOnA.lastHandshakeEpochNanos()).isEqualTo(Peer.NEVER);
        java.time.Instant handshakeAt = net.wall;
        aSends(100);
        net.advance(Duration.ofSeconds(1));
        bSends(1380);
        aSends(7);
        long aToB = bytes(EA, EB);
        long bToA = bytes(EB, EA);
        assertThat(net.sent.stream().filter(g -> g.from().equals(EA)).mapToInt(Net.Datagram::type).distinct())
                .as("A sent an initiation and data").contains(Messages.INITIATION, Messages.DATA);
        assertThat(net.sent.stream().filter(g -> g.from().equals(EB)).mapToInt(Net.Datagram::type).distinct())
                .as("B sent a response and data").contains(Messages.RESPONSE, Messages.DATA);
        assertThat(aToB).as("an initiation and two data messages at least").isGreaterThanOrEqualTo(Messages.INITIATION_SIZE + 2 * 48);
        assertThat(bOnA.txBytes()).isEqualTo(aToB);
        assertThat(aOnB.rxBytes()).isEqualTo(aToB);
        assertThat(aOnB.txBytes()).isEqualTo(bToA);
        assertThat(bOnA.rxBytes()).isEqualTo(bToA);
        long expected = handshakeAt.getEpochSecond() * 1_000_000_000L + handshakeAt.getNano();
        assertThat(bOnA.lastHandshakeEpochNanos()).as("the wall clock when A's handshake completed").isEqualTo(expected);
        assertThat(aOnB.lastHandshakeEpochNanos()).isEqualTo(expected);

        Net.Datagram replayed = net.sent.stream().filter(g -> g.type() == Messages.DATA && g.from().equals(EA)).findFirst().orElseThrow();
        b.receive(replayed.bytes(), 0, replayed.bytes().length, EA);
        assertThat(aOnB.rxBytes()).as("a replay is dropped, not counted").isEqualTo(aToB);
    }

    /** Bytes of all messages {@code from} sent {@code to}, handshakes and data. */
    private long bytes(Endpoint from, Endpoint to) {
        return net.sent.stream().filter(g -> g.from().equals(from) && g.to().equals(to))
                .mapToLong(g -> g.bytes().length).sum();
    }

    /**
     * Data both ways, each packet answered (as TCP's ACKs answer): every send after a receive arms the
     * new-handshake timer again with jitter, and that jitter must not come from the device's
     * SecureRandom (a read of /dev/urandom and SHA-1 per draw, on the packet thread). The handshake
     * itself draws (keys, indexes).
     */
    @Test
    void dataBothWaysNeverDrawsFromTheSecureRandom() {
        connect(Timings.standard(), null, null);
        aSends(100);
        bSends(100);
        long afterHandshake = net.random.draws;
        assertThat(afterHandshake).isPositive();
        for (int i = 0; i < 20; i++) {
            aSends(1000);
            bSends(40);
        }
        assertThat(net.delivered.get(b)).hasSize(21);
        assertThat(net.delivered.get(a)).hasSize(21);
        assertThat(net.random.draws).isEqualTo(afterHandshake);
    }

    /**
     * The data planes' two-phase paths: counters reserved in packet order but sealed in reverse (as
     * crypto threads may finish), the datagrams opened in any order and finished in arrival order:
     * all delivered, in order; finishing one twice is a replay.
     */
    @Test
    void reservedCountersSealedOutOfOrderAndTwoPhaseOpensDeliverInOrder() {
        connect(Timings.standard(), null, null);
        aSends(10); // the session
        net.delivered.get(b).clear();
        int n = 4;
        byte[][] packets = new byte[n][];
        Device.Reservation[] reserved = new Device.Reservation[n];
        Peer toB = null;
        for (int i = 0; i < n; i++) {
            packets[i] = ipv4(A_POD, B_POD, 100 + i);
            toB = a.peerForPacket(packets[i], 0, packets[i].length);
            reserved[i] = new Device.Reservation();
            assertThat(a.reserve(toB, packets[i], 0, packets[i].length, reserved[i])).isTrue();
        }
        byte[][] sealed = new byte[n][];
        for (int i = n - 1; i >= 0; i--) {
            byte[] out = new byte[a.sealedSize(packets[i].length)];
            int len = a.sealReserved(reserved[i], packets[i], 0, packets[i].length, out, 0);
            sealed[i] = java.util.Arrays.copyOf(out, len);
        }
        Device.Opened[] opened = new Device.Opened[n];
        byte[][] plain = new byte[n][];
        for (int i : new int[] {2, 0, 3, 1}) {
            assertThat(Device.isData(sealed[i], 0, sealed[i].length)).isTrue();
            opened[i] = new Device.Opened();
            plain[i] = new byte[sealed[i].length];
            assertThat(b.open(sealed[i], 0, sealed[i].length, plain[i], 0, opened[i])).isTrue();
        }
        for (int i = 0; i < n; i++) {
            b.finishData(opened[i], plain[i], 0, EA);
        }
        assertThat(net.delivered.get(b)).containsExactly(packets);
        b.finishData(opened[1], plain[1], 0, EA);
        assertThat(b.counters().droppedReplay.sum()).isEqualTo(1);
        assertThat(net.delivered.get(b)).hasSize(n);
    }

    /**
     * The data planes' in-place paths: a packet sealed where it lies (after room for the header,
     * padding and tag after it) is byte for byte what {@link Device#sealReserved} makes of it, and
     * opens in place to the packet, delivered once.
     */
    @Test
    void sealedInPlaceIsTheSameDatagramAndOpensInPlace() {
        connect(Timings.standard(), null, null);
        aSends(10); // the session
        net.delivered.get(b).clear();
        byte[] packet = ipv4(A_POD, B_POD, 81); // 101 bytes: 11 of padding
        Peer toB = a.peerForPacket(packet, 0, packet.length);
        Device.Reservation r = new Device.Reservation();
        byte[] buf = new byte[a.sealedSize(packet.length) + 7];
        java.util.Arrays.fill(buf, (byte) 0x5a); // whatever was in the slot before
        System.arraycopy(packet, 0, buf, Messages.DATA_HEADER, packet.length);
        assertThat(a.reserve(toB, buf, Messages.DATA_HEADER, packet.length, r)).isTrue();
        byte[] separate = new byte[a.sealedSize(packet.length)];
        assertThat(a.sealReserved(r, packet, 0, packet.length, separate, 0)).isEqualTo(separate.length);
        assertThat(a.sealReservedInPlace(r, buf, 0, packet.length)).isEqualTo(separate.length);
        assertThat(java.util.Arrays.copyOf(buf, separate.length)).isEqualTo(separate);

        Device.Opened o = new Device.Opened();
        assertThat(b.open(buf, 0, separate.length, buf, Messages.DATA_HEADER, o)).isTrue();
        b.finishData(o, buf, Messages.DATA_HEADER, EA);
        assertThat(net.delivered.get(b)).containsExactly(packet);
    }

    @Test
    void pskOnBothSidesWorksAndAMismatchNeverCompletes() {
        byte[] psk = new byte[32];
        RANDOM.nextBytes(psk);
        connect(Timings.standard(), psk, psk);
        aSends(10);
        assertThat(net.delivered.get(b)).hasSize(1);

        byte[] other = psk.clone();
        other[0] ^= 1;
        connect(Timings.standard(), psk, other);
        aSends(10);
        assertThat(net.delivered.get(b)).isEmpty();
        assertThat(a.counters().droppedBadHandshake.sum()).isEqualTo(1); // the response fails its AEAD
        assertThat(a.counters().handshakesCompleted.sum()).isZero();
    }

    @Test
    void replayedAndForgedDataIsDroppedAndCounted() {
        connect(Timings.standard(), null, null);
        aSends(64);
        Net.Datagram data = net.sent.stream().filter(g -> g.type() == Messages.DATA && g.to().equals(EB)
                && g.bytes().length > 32).reduce((x, y) -> y).orElseThrow();
        b.receive(data.bytes(), 0, data.bytes().length, EA);
        assertThat(b.counters().droppedReplay.sum()).isEqualTo(1);
        byte[] forged = data.bytes().clone();
        forged[40] ^= 0x10;
        forged[8] = 99; // a fresh counter, so only the tag can reject it
        b.receive(forged, 0, forged.length, EA);
        assertThat(b.counters().droppedBadAuth.sum()).isEqualTo(1);
        assertThat(net.delivered.get(b)).hasSize(1);
    }

    @Test
    void aPacketFromOutsideThePeersAllowedIpsIsDropped() {
        connect(Timings.standard(), null, null);
        byte[] spoofed = ipv4(ip(10, 244, 9, 9), B_POD, 20); // A may only send from 10.244.1.0/24
        a.sendPacket(spoofed, 0, spoofed.length);
        net.pump();
        assertThat(net.delivered.get(b)).isEmpty();
        assertThat(b.counters().droppedBadSource.sum()).isEqualTo(1);
    }

    @Test
    void aLostInitiationIsRetriedAfterRekeyTimeoutWithJitter() {
        connect(Timings.standard(), null, null);
        net.drop = g -> g.type() == Messages.INITIATION && net.sentOfType(Messages.INITIATION) == 1;
        aSends(10);
        assertThat(net.delivered.get(b)).isEmpty();
        net.advance(Duration.ofMillis(4_900));
        assertThat(net.sentOfType(Messages.INITIATION)).isEqualTo(1);
        net.advance(Duration.ofMillis(450)); // past 5 s + at most 333 ms of jitter
        assertThat(net.sentOfType(Messages.INITIATION)).isEqualTo(2);
        assertThat(net.delivered.get(b)).hasSize(1); // the staged packet went out after the retry's handshake
    }

    @Test
    void handshakeGivesUpAfterRekeyAttemptTime() {
        connect(Timings.standard(), null, null);
        net.drop = g -> g.type() == Messages.INITIATION;
        aSends(10);
        for (int i = 0; i < 30; i++) {
            net.advance(Duration.ofMillis(5_400));
        }
        assertThat(net.sentOfType(Messages.INITIATION)).isEqualTo(1 + Timings.standard().maxHandshakeAttempts());
    }

    @Test
    void initiatorRekeysAfterRekeyAfterTimeAndOldSessionKeepsWorking() {
        connect(Timings.standard().withRekeyAfterTime(Duration.ofSeconds(3)), null, null);
        aSends(10);
        net.advance(Duration.ofSeconds(6)); // beyond 3 s, and beyond REKEY_TIMEOUT since the last initiation
        aSends(10); // goes under the old key and starts a rekey
        assertThat(a.counters().handshakesCompleted.sum()).isEqualTo(2);
        aSends(10);
        bSends(10);
        assertThat(net.delivered.get(b)).hasSize(3);
        assertThat(net.delivered.get(a)).hasSize(1);
        assertThat(b.counters().handshakesCompleted.sum()).isEqualTo(2); // confirmed by A's data under the new key
    }

    @Test
    void rekeyAfterMessages() {
        connect(Timings.standard().withRekeyAfterMessages(5), null, null);
        for (int i = 0; i < 8; i++) {
            aSends(10);
        }
        // within REKEY_TIMEOUT of the first handshake no second initiation goes out (rate limit)
        assertThat(a.counters().handshakesCompleted.sum()).isEqualTo(1);
        net.advance(Duration.ofSeconds(6));
        aSends(10);
        assertThat(a.counters().handshakesCompleted.sum()).isEqualTo(2);
        assertThat(net.delivered.get(b)).hasSize(9);
    }

    @Test
    void sessionExpiresAtRejectAfterTime() {
        connect(Timings.standard(), null, null);
        net.drop = g -> net.sentOfType(Messages.INITIATION) > 1 && g.type() != Messages.DATA; // no second handshake
        aSends(10);
        net.nowNanos += Duration.ofSeconds(181).toNanos();
        aSends(10);
        assertThat(net.delivered.get(b)).hasSize(1); // the old keys are not used past 180 s
    }

    @Test
    void passiveKeepaliveAfterReceivingDataAndPersistentKeepalive() {
        connect(Timings.standard(), null, null);
        aSends(10);
        long before = b.counters().keepalivesSent.sum();
        net.advance(Duration.ofSeconds(11));
        assertThat(b.counters().keepalivesSent.sum()).isEqualTo(before + 1);

        b.setPeer(X25519.publicKey(aKey), null, null, List.of(new AllowedIp(ip(10, 244, 1, 0), 24)), 25);
        long k = b.counters().keepalivesSent.sum();
        net.advance(Duration.ofSeconds(26));
        assertThat(b.counters().keepalivesSent.sum()).isGreaterThan(k);
    }

    @Test
    void underLoadTheResponderAnswersWithACookieAndTheRetryCarriesMac2() {
        connect(Timings.standard(), null, null);
        net.loaded = EB;
        aSends(10);
        assertThat(b.counters().cookieRepliesSent.sum()).isEqualTo(1);
        assertThat(a.counters().cookieRepliesReceived.sum()).isEqualTo(1);
        assertThat(net.delivered.get(b)).isEmpty();
        net.advance(Duration.ofMillis(5_400));
        assertThat(b.counters().cookieRepliesSent.sum()).isEqualTo(1); // the retry had a valid mac2
        assertThat(net.delivered.get(b)).hasSize(1);
    }

    @Test
    void underLoadAnEstablishedSessionKeepsCarryingData() {
        connect(Timings.standard(), null, null);
        aSends(10);
        net.loaded = EB; // a handshake flood would set this: data messages are never gated by it
        for (int i = 0; i < 5; i++) {
            aSends(10);
            bSends(10);
        }
        assertThat(net.delivered.get(b)).hasSize(6);
        assertThat(net.delivered.get(a)).hasSize(5);
        assertThat(b.counters().cookieRepliesSent.sum()).isZero();
    }

    /**
     * Under load a source that holds a valid cookie still gets 20 handshake messages a second at most
     * (the kernel's ratelimiter): one replaying its initiation flat out is dropped beyond that, before
     * any Curve25519 work, while another peer's handshake from its own address completes.
     */
    @Test
    void underLoadOneSourceOverItsRateIsDroppedAndAnotherStillGetsThrough() {
        connect(Timings.standard(), null, null);
        net.loaded = EB;
        aSends(10);
        net.advance(Duration.ofMillis(5_400)); // the retry with mac2 completes
        assertThat(net.delivered.get(b)).hasSize(1);
        Net.Datagram withCookie = net.sent.stream().filter(g -> g.type() == Messages.INITIATION).reduce((x, y) -> y).orElseThrow();

        Endpoint ec = new Endpoint(ip(192, 168, 0, 3), 51820);
        byte[] cKey = X25519.generatePrivate(RANDOM);
        Device c = net.device(ec, cKey, Timings.standard());
        c.setPeer(X25519.publicKey(bKey), null, EB, List.of(new AllowedIp(ip(10, 244, 2, 0), 24)), 0);
        b.setPeer(X25519.publicKey(cKey), null, ec, List.of(new AllowedIp(ip(10, 244, 3, 0), 24)), 0);
        byte[] p = ipv4(ip(10, 244, 3, 5), B_POD, 10);
        c.sendPacket(p, 0, p.length);
        net.pump(); // a cookie reply: c retries 5 s later with mac2
        long handshakesBefore = b.counters().handshakesCompleted.sum();
        for (int step = 0; step < 110 && net.delivered.get(b).size() < 2; step++) { // 5.5 s in 50-ms steps
            for (int i = 0; i < 5; i++) { // 100 a second from EA, a valid mac2 each
                b.receive(withCookie.bytes(), 0, withCookie.bytes().length, EA);
            }
            net.advance(Duration.ofMillis(50));
        }
        assertThat(net.delivered.get(b)).hasSize(2); // c's packet, after c's handshake
        assertThat(b.counters().handshakesCompleted.sum()).isEqualTo(handshakesBefore + 1);
        long replays = b.counters().droppedRateLimited.sum() + b.counters().droppedBadHandshake.sum();
        assertThat(b.counters().droppedRateLimited.sum()).isGreaterThanOrEqualTo(replays * 3 / 4); // ≥ 80 of each 100 a second
        assertThat(b.counters().droppedBadHandshake.sum()).isPositive(); // those let through are replays, refused by their timestamp
    }

    @Test
    void aBadMac1IsDroppedBeforeAnyWork() {
        connect(Timings.standard(), null, null);
        net.drop = g -> {
            if (g.type() == Messages.INITIATION) {
                g.bytes()[120] ^= 1;
            }
            return false;
        };
        aSends(10);
        assertThat(b.counters().droppedBadMac.sum()).isEqualTo(1);
        assertThat(b.counters().handshakesCompleted.sum()).isZero();
    }

    @Test
    void aReplayedInitiationIsRefused() {
        connect(Timings.standard(), null, null);
        aSends(10);
        Net.Datagram init = net.sent.stream().filter(g -> g.type() == Messages.INITIATION).findFirst().orElseThrow();
        net.advance(Duration.ofSeconds(1));
        b.receive(init.bytes(), 0, init.bytes().length, EA);
        assertThat(b.counters().droppedBadHandshake.sum()).isEqualTo(1);
    }

    @Test
    void theEndpointRoamsToWhereAuthenticatedPacketsComeFrom() {
        connect(Timings.standard(), null, null);
        aSends(10);
        Endpoint moved = new Endpoint(ip(192, 168, 7, 7), 40000);
        net.devices.put(moved, a);
        byte[] p = ipv4(A_POD, B_POD, 10);
        byte[] out = new byte[a.sealedSize(p.length)];
        Peer toB = a.peer(X25519.publicKey(bKey)).orElseThrow();
        int n = a.seal(toB, p, 0, p.length, out, 0);
        b.receive(out, 0, n, moved);
        assertThat(b.peer(X25519.publicKey(aKey)).orElseThrow().endpoint()).isEqualTo(moved);
    }

    @Test
    void bothSidesInitiatingAtOnceStillConverge() {
        connect(Timings.standard(), null, null);
        byte[] pa = ipv4(A_POD, B_POD, 10);
        byte[] pb = ipv4(B_POD, A_POD, 10);
        a.sendPacket(pa, 0, pa.length);
        b.sendPacket(pb, 0, pb.length);
        net.pump();
        // the lower key's initiation wins the tie-break: one handshake, both first packets through, no retry
        assertThat(net.delivered.get(b)).hasSize(1);
        assertThat(net.delivered.get(a)).hasSize(1);
        assertThat(a.counters().handshakesCompleted.sum()).isEqualTo(1);
        assertThat(a.counters().crossedInitiationsIgnored.sum() + b.counters().crossedInitiationsIgnored.sum()).isEqualTo(1);
        aSends(10);
        bSends(10);
        assertThat(net.delivered.get(b)).hasSize(2);
        assertThat(net.delivered.get(a)).hasSize(2);
    }

    /**
     * A plain WireGuard peer (the kernel's, wireguard-go) answers every initiation and drops its own when it
     * does. With our key the higher, ours answers the peer's too (the tie-break makes the other side yield),
     * so the two responses each name an initiation the other side dropped: ours must keep its own for the
     * peer's answer to complete, else both wait 5 s for a retry. With ours the lower, ours ignores the peer's.
     */
    @Test
    void initiationsCrossingWithAPlainPeerConvergeWithoutARetryEitherKeyOrder() {
        for (boolean oursHigher : new boolean[] {true, false}) {
            while ((Arrays.compareUnsigned(X25519.publicKey(aKey), X25519.publicKey(bKey)) > 0) != oursHigher) {
                aKey = X25519.generatePrivate(RANDOM);
            }
            connect(Timings.standard(), null, null);
            b.behaveAsPlainWireguard();
            byte[] pa = ipv4(A_POD, B_POD, 10);
            byte[] pb = ipv4(B_POD, A_POD, 10);
            a.sendPacket(pa, 0, pa.length);
            b.sendPacket(pb, 0, pb.length);
            net.pump();
            assertThat(net.delivered.get(b)).as("ours higher: " + oursHigher).hasSize(1);
            assertThat(net.delivered.get(a)).as("ours higher: " + oursHigher).hasSize(1);
            assertThat(a.counters().droppedUnknownIndex.sum()).as("every answer to ours finds its initiation").isZero();
            aSends(10);
            bSends(10);
            assertThat(net.delivered.get(b)).hasSize(2);
            assertThat(net.delivered.get(a)).hasSize(2);
        }
    }

    @Test
    void aRemovedPeersTrafficIsDropped() {
        connect(Timings.standard(), null, null);
        aSends(10);
        b.removePeer(X25519.publicKey(aKey));
        aSends(10);
        assertThat(net.delivered.get(b)).hasSize(1);
        assertThat(b.counters().droppedUnknownIndex.sum()).isPositive();
    }

    /**
     * A restarted node (a new device, the same key) drops what its peer still sends on the session of its previous
     * run; its initiation to the peer it just learnt of (a second later) moves the peer to a new session (without
     * it the peer's own timers would initiate 15 s later).
     */
    @Test
    void aRestartedSidesInitiationMovesThePeerOffItsOldSessionASecondLater() {
        connect(Timings.standard(), null, null);
        aSends(10);
        bSends(10);
        net.wall = net.wall.plusSeconds(2); // the restart takes a while: its handshake's timestamp is later than the last
        net.nowNanos += 2_000_000_000L;
        Device restarted = net.device(EA, aKey, Timings.standard());
        Peer toB = restarted.setPeer(X25519.publicKey(bKey), null, EB, List.of(new AllowedIp(ip(10, 244, 2, 0), 24)), 0);
        byte[] stale = ipv4(B_POD, A_POD, 20);
        b.sendPacket(stale, 0, stale.length);
        net.pump();
        assertThat(net.delivered.get(restarted)).as("the old session's data").isEmpty();
        assertThat(restarted.counters().droppedUnknownIndex.sum()).isEqualTo(1);

        restarted.initiateHandshake(toB);
        net.advance(Duration.ofSeconds(1)); // the initiation on learning waits a second
        b.sendPacket(stale, 0, stale.length);
        net.pump();
        assertThat(net.delivered.get(restarted)).containsExactly(stale);
        assertThat(toB.hasSession()).isTrue();
        restarted.initiateHandshake(toB); // a session is up: nothing more
        assertThat(net.sentOfType(Messages.INITIATION)).isEqualTo(2);
    }

    @Test
    void bothSidesInitiatingOnLearningEachOtherConvergeWithoutARetry() {
        connect(Timings.standard(), null, null);
        a.initiateHandshake(a.peer(X25519.publicKey(bKey)).orElseThrow());
        b.initiateHandshake(b.peer(X25519.publicKey(aKey)).orElseThrow());
        net.advance(Duration.ofSeconds(1));
        aSends(10);
        bSends(10);
        assertThat(net.delivered.get(b)).hasSize(1);
        assertThat(net.delivered.get(a)).hasSize(1);
        assertThat(net.sentOfType(Messages.INITIATION)).isEqualTo(2);
        // initiations sent on learning a peer never win a crossing (the peer may not know us yet): both are answered
        assertThat(a.counters().crossedInitiationsIgnored.sum() + b.counters().crossedInitiationsIgnored.sum()).isZero();
        assertThat(a.counters().handshakesSpeculative.sum() + b.counters().handshakesSpeculative.sum()).isEqualTo(2);
    }

    @Test
    void trafficWithinTheSecondAfterLearningMakesTheOnlyHandshake() {
        connect(Timings.standard(), null, null);
        a.initiateHandshake(a.peer(X25519.publicKey(bKey)).orElseThrow());
        aSends(10);
        net.advance(Duration.ofSeconds(2));
        assertThat(net.delivered.get(b)).hasSize(1);
        assertThat(net.sentOfType(Messages.INITIATION)).as("no speculative one beside traffic's").isEqualTo(1);
    }

    @Test
    void anInitiationThePeerDroppedDoesNotHoldBackTheOneTrafficAsksFor() {
        connect(Timings.standard(), null, null);
        // a learns b before b learns a: its initiation on learning is lost (b does not know a yet)
        net.drop = g -> g.type() == Messages.INITIATION && net.sentOfType(Messages.INITIATION) == 1;
        a.initiateHandshake(a.peer(X25519.publicKey(bKey)).orElseThrow());
        net.advance(Duration.ofSeconds(1));
        aSends(10); // a second later: a REKEY_TIMEOUT would hold a normal initiation back here
        assertThat(net.delivered.get(b)).hasSize(1);
        assertThat(net.sentOfType(Messages.INITIATION)).isEqualTo(2);
    }
}
