package org.jflannel.backend.wireguard.protocol;

import java.util.concurrent.atomic.LongAdder;

/** What the device did and dropped, by reason (for metrics and the security tests). */
public final class Counters {
    public final LongAdder rxPackets = new LongAdder();
    public final LongAdder txPackets = new LongAdder();
    public final LongAdder rxBytes = new LongAdder();
    public final LongAdder txBytes = new LongAdder();
    public final LongAdder handshakesInitiated = new LongAdder();
    /** Of those, the ones sent on learning a peer, before any traffic asked (a restarted node's). */
    public final LongAdder handshakesSpeculative = new LongAdder();
    public final LongAdder handshakesCompleted = new LongAdder();
    public final LongAdder cookieRepliesSent = new LongAdder();
    public final LongAdder cookieRepliesReceived = new LongAdder();
    public final LongAdder keepalivesSent = new LongAdder();
    /** A peer's initiation crossed ours and ours wins the tie-break (lower public key): theirs is not answered. */
    public final LongAdder crossedInitiationsIgnored = new LongAdder();
    /** Not a WireGuard message, or of the wrong size. */
    public final LongAdder droppedMalformed = new LongAdder();
    public final LongAdder droppedBadMac = new LongAdder();
    /** Under load, a handshake message with a valid cookie beyond its source address's rate (20 a second, 5 at once). */
    public final LongAdder droppedRateLimited = new LongAdder();
    /** A handshake that did not authenticate, named an unknown key, or replayed a timestamp. */
    public final LongAdder droppedBadHandshake = new LongAdder();
    public final LongAdder droppedUnknownIndex = new LongAdder();
    /** Transport data whose tag failed (wrong key, tampered). */
    public final LongAdder droppedBadAuth = new LongAdder();
    public final LongAdder droppedReplay = new LongAdder();
    /** An inner packet whose source is not in the sending peer's allowed IPs. */
    public final LongAdder droppedBadSource = new LongAdder();
    /** A packet from the TUN for which no peer's allowed IPs match. */
    public final LongAdder droppedNoPeer = new LongAdder();
    public final LongAdder droppedStaleKeys = new LongAdder();

    @Override
    public String toString() {
        return "rx=" + rxPackets + " tx=" + txPackets + " handshakes=" + handshakesCompleted + " cookies=" + cookieRepliesSent
                + " malformed=" + droppedMalformed + " badMac=" + droppedBadMac + " rateLimited=" + droppedRateLimited + " badHandshake=" + droppedBadHandshake
                + " unknownIndex=" + droppedUnknownIndex + " badAuth=" + droppedBadAuth + " replay=" + droppedReplay
                + " badSource=" + droppedBadSource + " noPeer=" + droppedNoPeer;
    }
}
