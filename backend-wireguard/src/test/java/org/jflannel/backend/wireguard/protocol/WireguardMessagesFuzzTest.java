package org.jflannel.backend.wireguard.protocol;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.jflannel.backend.wireguard.crypto.X25519;

/**
 * What any host can send to the userspace WireGuard port (51820): initiations, responses, cookie replies
 * and data messages, with and without a valid session. Per input two devices A and B shake hands over
 * {@link Net} (B first under load, so the exchange holds a cookie reply), exchange data both ways, and
 * every message that crossed is kept. The input then picks one of them (or none: its bytes are the
 * datagram), XORs bytes into it at the offsets it names, and says who sends it: the original sender's
 * address, a host that is no peer, or the receiver's other peer address. Properties: the datagram is
 * dropped or answered, never an exception; nothing reaches either TUN (a forgery cannot authenticate and
 * an unmodified message is a replay); neither device's idea of its peer's endpoint changes (a forged or
 * replayed datagram must not make a peer roam); the drop is counted.
 */
class WireguardMessagesFuzzTest {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final byte[] A_KEY = X25519.generatePrivate(RANDOM);
    private static final byte[] B_KEY = X25519.generatePrivate(RANDOM);
    private static final Endpoint EA = new Endpoint(Net.ip(192, 168, 0, 1), 51820);
    private static final Endpoint EB = new Endpoint(Net.ip(192, 168, 0, 2), 51820);
    private static final Endpoint STRANGER = new Endpoint(Net.ip(203, 0, 113, 7), 51820);
    private static final int A_POD = Net.ip(10, 244, 1, 5);
    private static final int B_POD = Net.ip(10, 244, 2, 5);

    @FuzzTest(maxDuration = "5m")
    void forgedAndReplayedDatagrams(byte[] input) {
        if (input.length < 2) {
            return;
        }
        Net net = new Net();
        Device a = net.device(EA, A_KEY, Timings.standard());
        Device b = net.device(EB, B_KEY, Timings.standard());
        Peer bOnA = a.setPeer(X25519.publicKey(B_KEY), null, EB, List.of(new AllowedIp(Net.ip(10, 244, 2, 0), 24)), 0);
        Peer aOnB = b.setPeer(X25519.publicKey(A_KEY), null, EA, List.of(new AllowedIp(Net.ip(10, 244, 1, 0), 24)), 0);
        net.loaded = EB;
        send(net, a, A_POD, B_POD);
        net.loaded = null;
        net.advance(Duration.ofMillis(5_400)); // the retry, with mac2; then response and data
        send(net, b, B_POD, A_POD);
        send(net, a, A_POD, B_POD);
        List<Net.Datagram> seen = List.copyOf(net.sent);
        int deliveredA = net.delivered.get(a).size();
        int deliveredB = net.delivered.get(b).size();
        if (deliveredA != 1 || deliveredB != 2) {
            throw new AssertionError("the scene did not set up: delivered A=" + deliveredA + " B=" + deliveredB);
        }

        int pick = (input[0] & 0xff) % (seen.size() + 1);
        byte[] msg;
        Device to;
        Endpoint original;
        if (pick == seen.size()) {
            msg = Arrays.copyOfRange(input, 2, input.length);
            to = b;
            original = EA;
        } else {
            Net.Datagram g = seen.get(pick);
            msg = g.bytes().clone();
            to = net.devices.get(g.to());
            original = g.from();
            for (int i = 2; i + 2 < input.length; i += 3) {
                int at = ((input[i] & 0xff) << 8 | (input[i + 1] & 0xff)) % msg.length;
                msg[at] ^= input[i + 2];
            }
        }
        Endpoint from = switch ((input[1] & 0xff) % 3) {
            case 0 -> original;
            case 1 -> STRANGER;
            default -> to == b ? EB : EA; // the receiver's own address: a reflected datagram
        };
        long dropsBefore = drops(to.counters());
        to.receive(msg, 0, msg.length, from);
        net.pump();

        if (net.delivered.get(a).size() != deliveredA || net.delivered.get(b).size() != deliveredB) {
            throw new AssertionError("a forged or replayed datagram reached a TUN (message " + pick + ")");
        }
        if (!EB.equals(bOnA.endpoint()) || !EA.equals(aOnB.endpoint())) {
            throw new AssertionError("a forged or replayed datagram moved a peer: A sees B at " + bOnA.endpoint()
                    + ", B sees A at " + aOnB.endpoint());
        }
        boolean answered = net.sent.size() > seen.size();
        if (!answered && drops(to.counters()) == dropsBefore) {
            throw new AssertionError("a datagram neither answered nor counted as dropped (message " + pick + ")");
        }
    }

    private static void send(Net net, Device d, int src, int dst) {
        byte[] p = Net.ipv4(src, dst, 64);
        d.sendPacket(p, 0, p.length);
        net.pump();
    }

    private static long drops(Counters c) {
        return c.droppedMalformed.sum() + c.droppedBadMac.sum() + c.droppedRateLimited.sum() + c.droppedBadHandshake.sum()
                + c.droppedUnknownIndex.sum() + c.droppedBadAuth.sum() + c.droppedReplay.sum() + c.droppedBadSource.sum()
                + c.droppedNoPeer.sum() + c.droppedStaleKeys.sum() + c.crossedInitiationsIgnored.sum();
    }
}
