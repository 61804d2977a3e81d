package org.jflannel.backend.wireguard;

import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.security.SecureRandom;
import org.jflannel.backend.wireguard.crypto.X25519;
import org.jflannel.backend.wireguard.protocol.Cookies;
import org.jflannel.backend.wireguard.protocol.Messages;
import org.jflannel.backend.wireguard.protocol.Noise;

/**
 * Handshake floods against a WireGuard responder, as an attacker who knows its public key makes them (for the
 * two-node test and the e2e cluster's). Sent from the calling thread, so from the namespace it runs in.
 */
public final class HandshakeFlood {
    private HandshakeFlood() {
    }

    /** {@code n} handshake initiations to {@code responder} from fresh unknown keys, mac1 valid, no mac2. */
    public static byte[][] initiations(byte[] responder, int n) {
        SecureRandom random = new SecureRandom();
        Noise noise = new Noise();
        Cookies.Generator macs = new Cookies.Generator(responder, Long.MAX_VALUE);
        byte[][] out = new byte[n][];
        for (int i = 0; i < n; i++) {
            byte[] priv = X25519.generatePrivate(random);
            byte[] msg = new byte[Messages.INITIATION_SIZE];
            noise.createInitiation(new Noise.Handshake(), priv, X25519.publicKey(priv), responder,
                    X25519.dh(priv, responder).orElseThrow(), Noise.tai64n(1_800_000_000L + i, 0), i + 1, random, msg);
            macs.addMacs(msg, 0, msg.length, 0);
            out[i] = msg;
        }
        return out;
    }

    /** Sends each message once from an ephemeral port of {@code from} to {@code to}. */
    public static void send(InetSocketAddress from, InetSocketAddress to, byte[][] messages) throws Exception {
        try (DatagramSocket s = new DatagramSocket(new InetSocketAddress(from.getAddress(), 0))) {
            for (byte[] m : messages) {
                s.send(new DatagramPacket(m, m.length, to));
            }
        }
    }

    /**
     * From one socket at {@code from}'s address: mac1-only initiations until the responder at {@code to}, under
     * load, answers one with a cookie reply; that cookie taken (as a real peer would), then {@code n} initiations
     * from a key it does not know, each with a valid mac2, sent at once. Returns how many were sent with the
     * cookie; an {@link IllegalStateException} when no cookie came in 5 tries.
     */
    public static int withCookie(InetSocketAddress from, InetSocketAddress to, byte[] responder, int n) throws Exception {
        SecureRandom random = new SecureRandom();
        Noise noise = new Noise();
        Cookies.Generator macs = new Cookies.Generator(responder, Long.MAX_VALUE);
        byte[][] load = initiations(responder, 200);
        byte[] priv = X25519.generatePrivate(random);
        byte[] pub = X25519.publicKey(priv);
        byte[] dh = X25519.dh(priv, responder).orElseThrow();
        try (DatagramSocket s = new DatagramSocket(new InetSocketAddress(from.getAddress(), 0))) {
            s.setSoTimeout(2000);
            byte[] reply = new byte[256];
            boolean cookie = false;
            for (int attempt = 0; attempt < 5 && !cookie; attempt++) {
                send(from, to, load); // the responder under load (held 1 s)
                byte[] first = new byte[Messages.INITIATION_SIZE];
                noise.createInitiation(new Noise.Handshake(), priv, pub, responder, dh, Noise.tai64n(1_900_000_000L + attempt, 0),
                        1000 + attempt, random, first);
                macs.addMacs(first, 0, first.length, 0);
                s.send(new DatagramPacket(first, first.length, to));
                try {
                    s.receive(new DatagramPacket(reply, reply.length));
                    cookie = reply[0] == Messages.COOKIE_REPLY && macs.consumeReply(reply, 0, 0);
                } catch (SocketTimeoutException e) {
                    // no answer: not under load yet; load it again
                }
            }
            if (!cookie) {
                throw new IllegalStateException("no cookie reply from " + to + " to an initiation under load in 5 tries");
            }
            byte[][] flood = new byte[n][];
            for (int i = 0; i < n; i++) {
                flood[i] = new byte[Messages.INITIATION_SIZE];
                noise.createInitiation(new Noise.Handshake(), priv, pub, responder, dh, Noise.tai64n(1_900_000_100L + i, 0),
                        2000 + i, random, flood[i]);
                macs.addMacs(flood[i], 0, flood[i].length, 0);
            }
            for (byte[] m : flood) {
                s.send(new DatagramPacket(m, m.length, to));
            }
            return n;
        }
    }
}
