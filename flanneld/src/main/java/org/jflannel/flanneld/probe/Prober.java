package org.jflannel.flanneld.probe;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import org.jflannel.core.LeaseEvent;
import org.jflannel.flanneld.health.Metrics;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.linuxnet.socket.IcmpBatch;
import org.jflannel.linuxnet.socket.IcmpEchoBatch;
import org.jflannel.linuxnet.socket.IcmpMessage;
import org.jflannel.linuxnet.socket.IcmpSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours (issue 12): probes every peer through the overlay on one named thread, {@code peer-probe},
 * and says why a peer is unreachable. Owns that thread, one raw ICMP socket and one rtnetlink
 * socket (for dumps of the VXLAN device's entries), all opened in the daemon's network namespace;
 * {@link #close()} releases them. Lease changes arrive through {@link #apply} from the lease-events
 * thread and are taken over by the probe thread at its next tick; /peers reads {@link #statuses()}.
 *
 * <p>The thread wakes once per tick (100 ms), not per reply: it takes every reply queued since the
 * last tick in one {@code recvmmsg}, ends the rounds that are complete or timed out, starts the rounds
 * that are due, sends all of the tick's probes in one {@code sendmmsg}, and sleeps. Round-trip times come from the kernel's receive timestamps, so reading
 * late does not inflate them. At 2,000 peers that is 10 wake-ups a second instead of ~400, and
 * nothing allocated per reply but its outcome.
 */
public final class Prober implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Prober.class);
    private static final Duration TICK = Duration.ofMillis(100);
    /** Replies taken per recvmmsg; a tick at 2,000 peers brings ~80. */
    private static final int BATCH = 64;

    private final ProbeSettings settings;
    private final Metrics metrics;
    private final ProbeSchedule schedule;
    private final IcmpSocket socket;
    private final IcmpBatch batch = new IcmpBatch(BATCH);
    /** This tick's probes, sent together at its end (or when full): which peer and probe each slot is. */
    private final IcmpEchoBatch sends = new IcmpEchoBatch(BATCH);
    private final Peer[] sendPeers = new Peer[BATCH];
    private final Round.Probe[] sendProbes = new Round.Probe[BATCH];
    private final int[] sendSeqs = new int[BATCH];
    /** Failure counters by {@link Cause#ordinal()}, created at their first use. */
    private final Runnable[] failures = new Runnable[Cause.values().length];
    private final RtNetlink nl;
    private final int id = ThreadLocalRandom.current().nextInt(1, 0x10000);
    private final ConcurrentLinkedQueue<List<LeaseEvent>> inbox = new ConcurrentLinkedQueue<>();
    /** The peers for /peers (their {@link Peer#status} is volatile): changed only when peers come and go. */
    private final Map<String, Peer> published = new ConcurrentHashMap<>();
    // probe thread only:
    private final Map<String, Peer> peers = new HashMap<>();
    private final PriorityQueue<Peer> due = new PriorityQueue<>();
    /** Peers with a round running, in no particular order. */
    private final List<Peer> active = new ArrayList<>();
    private final ProbeSeqTable<Peer> pending = new ProbeSeqTable<>();
    private final EntryDumps entries;
    private final Thread thread;
    private volatile boolean running = true;

    /** The probe thread's state of one peer (one object per peer for its whole life, so nothing per round but the round). */
    private static final class Peer implements Comparable<Peer> {
        PeerTarget target;
        /** {@link #target}'s overlay and underlay addresses as {@link IcmpSocket#address} ints. */
        int overlay;
        int underlay;
        long dueAt;
        /** The round running, or null. */
        Round round;
        /** The latest verdict; read by /peers on another thread. */
        volatile PeerStatus status;
        /** Its flanneld_peer_reachable series; null until the first round ends (the series is absent before). */
        java.util.function.DoubleConsumer reachable;
        /** What {@link #reachable} was last set to. */
        int reachableValue;

        Peer(PeerTarget target) {
            retarget(target);
        }

        void retarget(PeerTarget t) {
            target = t;
            overlay = IcmpSocket.address(t.overlay());
            underlay = IcmpSocket.address(t.underlay());
        }

        @Override
        public int compareTo(Peer o) { // the due queue's order (no key-extractor lambdas per comparison)
            return Long.compare(dueAt, o.dueAt);
        }
    }

    private Prober(ProbeSettings settings, Metrics metrics, IcmpSocket socket, RtNetlink nl) {
        this.settings = settings;
        this.metrics = metrics;
        this.socket = socket;
        this.nl = nl;
        this.entries = new EntryDumps(nl, settings.vxlanDevice());
        this.schedule = schedule(settings);
        this.thread = new Thread(this::loop, "peer-probe");
        this.thread.setDaemon(true);
    }

    /**
     * The schedule of {@code settings}' rounds: made on the starting thread, drawn from on the probe thread, so each
     * draw asks the drawing thread's own {@link ThreadLocalRandom}. (The instance {@code current()} returns here,
     * used on another thread, reads that thread's never-seeded state: the same jitter in every process, so all
     * nodes' rounds fell into step.)
     */
    static ProbeSchedule schedule(ProbeSettings settings) {
        return new ProbeSchedule(settings.interval(), 0.1, () -> ThreadLocalRandom.current().nextLong());
    }

    /** Opens the sockets in the calling thread's namespace and starts the {@code peer-probe} thread. */
    public static Prober start(ProbeSettings settings, Metrics metrics) throws NetlinkException {
        IcmpSocket socket = IcmpSocket.open();
        RtNetlink nl;
        try {
            nl = RtNetlink.open();
        } catch (NetlinkException e) {
            socket.close();
            throw e;
        }
        Prober p = new Prober(settings, metrics, socket, nl);
        p.thread.start();
        LOG.info("peer probing started interval={}s fullSize={} device={}", settings.interval().toSeconds(),
                settings.fullSize(), settings.describe());
        return p;
    }

    /** Lease changes (already diffed, own lease excluded); called on the lease-events thread, never blocks. */
    public void apply(List<LeaseEvent> diff) {
        inbox.add(List.copyOf(diff));
    }

    /** The latest verdict per peer, for /peers. */
    public Collection<PeerStatus> statuses() {
        List<PeerStatus> all = new ArrayList<>(published.size());
        for (Peer p : published.values()) {
            all.add(p.status);
        }
        return all;
    }

    public ProbeSettings settings() {
        return settings;
    }

    /** A dump of the VXLAN device's entries now (for /peers); {@link KernelEntries#NONE} for udp. */
    KernelEntries kernelEntries() throws IOException {
        if (settings.vxlanDevice() == null) {
            return KernelEntries.NONE;
        }
        try (RtNetlink own = RtNetlink.open()) { // the probe thread's socket is not shared
            return KernelEntries.dump(own, settings.vxlanDevice());
        }
    }

    private void loop() {
        try {
            long next = System.nanoTime();
            while (running) {
                tick(System.nanoTime());
                next += TICK.toNanos();
                long now = System.nanoTime();
                if (next - now <= 0) {
                    next = now; // behind (a long pause): no burst of catch-up ticks
                } else {
                    LockSupport.parkNanos(this, next - now);
                }
            }
        } catch (NetlinkException | RuntimeException e) {
            if (running) {
                LOG.error("peer probing stopped error={}", e.toString());
            }
        }
    }

    /** One tick (its own method: the loop itself runs interpreted until an on-stack compilation, this does not). */
    private void tick(long now) throws NetlinkException {
        takeLeaseChanges();
        takeReplies(now);
        advanceRounds(now);
        startDueRounds(now);
        flushSends();
    }

    private void takeLeaseChanges() {
        List<LeaseEvent> changes;
        while ((changes = inbox.poll()) != null) {
            for (LeaseEvent e : changes) {
                String key = e.lease().key();
                Optional<PeerTarget> t = e.type() == LeaseEvent.Type.ADDED ? PeerTarget.of(e.lease(), settings.hostGw()) : Optional.empty();
                if (t.isEmpty()) {
                    forget(key);
                    continue;
                }
                Peer p = peers.get(key);
                if (p == null) {
                    p = new Peer(t.get());
                    p.dueAt = schedule.firstDue(System.nanoTime());
                    p.status = PeerStatus.unknown(t.get(), Instant.now());
                    peers.put(key, p);
                    due.add(p);
                    published.put(key, p);
                } else {
                    if (!p.target.underlay().equals(t.get().underlay())) {
                        metrics.removePeer(p.target.peer(), p.target.subnet()); // the label changes with the public IP
                        p.reachable = null;
                    }
                    p.retarget(t.get());
                    PeerStatus s = p.status;
                    p.status = new PeerStatus(t.get(), s.state(), s.cause(), s.since(), s.lastProbe(), s.small(),
                            s.fullSize(), s.underlay(), s.detail());
                }
            }
        }
    }

    private void forget(String key) {
        Peer p = peers.remove(key);
        published.remove(key);
        if (p == null) {
            return;
        }
        due.remove(p);
        for (int i = 0; i < sends.size(); i++) {
            if (sendPeers[i] == p) {
                sendPeers[i] = null; // queued for this tick's send: goes, but no round waits for it
            }
        }
        if (p.round != null) {
            for (int s : p.round.expire()) {
                pending.release(s);
            }
            p.round = null;
            active.remove(p);
        }
        metrics.removePeer(p.target.peer(), p.target.subnet());
        p.reachable = null;
    }

    private void startDueRounds(long now) throws NetlinkException {
        int budget = ProbeSchedule.maxStartsPerTick(peers.size(), TICK, settings.interval());
        while (budget > 0 && !due.isEmpty() && due.peek().dueAt - now <= 0) {
            Peer p = due.poll();
            p.dueAt = schedule.nextDue(p.dueAt, p.status.state() == PeerStatus.State.UNREACHABLE);
            due.add(p);
            if (p.round == null) { // a round still running is not doubled
                startRound(p, now);
                budget--;
            }
        }
    }

    private void startRound(Peer p, long now) throws NetlinkException {
        Round r = new Round(p.target, now + settings.timeout().toNanos());
        p.round = r;
        active.add(p);
        send(p, Round.Probe.SMALL, p.overlay, ProbeSettings.SMALL_SIZE);
        send(p, Round.Probe.FULL_SIZE, p.overlay, settings.fullSize());
    }

    /** Queues one probe of {@code p}'s round for this tick's send. */
    private void send(Peer p, Round.Probe probe, int dst, int size) throws NetlinkException {
        if (sends.size() == sends.slots()) {
            flushSends();
        }
        int s = pending.claim(p);
        sendPeers[sends.size()] = p;
        sendProbes[sends.size()] = probe;
        sendSeqs[sends.size()] = s;
        sends.add(dst, id, s, size);
    }

    /** Sends what this tick queued (one sendmmsg) and records per probe: sent, or refused with its errno. */
    private void flushSends() throws NetlinkException {
        int n = sends.size();
        if (n == 0) {
            return;
        }
        long at = System.nanoTime();
        socket.send(sends);
        for (int i = 0; i < n; i++) {
            Peer p = sendPeers[i];
            sendPeers[i] = null;
            int errno = sends.errno(i);
            if (p == null) { // forgotten meanwhile
                pending.release(sendSeqs[i]);
            } else if (errno == 0) {
                p.round.sent(sendProbes[i], sendSeqs[i], at);
            } else {
                pending.release(sendSeqs[i]);
                p.round.resolve(sendProbes[i], Outcome.error("send " + sends.errnoName(i)));
            }
        }
        sends.clear();
    }

    /** Everything queued since the last tick, batch by batch. */
    private void takeReplies(long now) throws NetlinkException {
        long wallMinusMono = 0;
        boolean clocksRead = false;
        int n;
        do {
            n = socket.receive(batch);
            if (n > 0 && !clocksRead) { // one reading of both clocks for all of this tick's replies
                Instant wall = Instant.now();
                wallMinusMono = wall.getEpochSecond() * 1_000_000_000L + wall.getNano() - System.nanoTime();
                clocksRead = true;
            }
            for (int i = 0; i < n; i++) {
                onMessage(i, wallMinusMono, now);
            }
        } while (n == batch.slots());
    }

    private void onMessage(int i, long wallMinusMono, long now) {
        IcmpMessage.Kind kind = batch.kind(i);
        if (kind == null || batch.id(i) != id) {
            return; // not about an echo request, or another pinger's
        }
        int seq = batch.seq(i);
        Peer p = pending.owner(seq);
        Round r = p == null ? null : p.round;
        Round.Probe probe = r == null ? null : r.outstanding(seq);
        if (probe == null) {
            return; // a round that is over
        }
        // the peer's addresses now: a lease that changed its public IP during the round costs that round its underlay answer
        int expected = probe == Round.Probe.UNDERLAY ? p.underlay : p.overlay;
        if (batch.target(i) != expected) {
            return;
        }
        pending.release(seq);
        if (kind == IcmpMessage.Kind.ECHO_REPLY) {
            double rtt = ProbeClock.rttNanos(r.sentNanos(probe), batch.kernelTimestampNanos(i), wallMinusMono, now) / 1e9;
            if (probe != Round.Probe.UNDERLAY && probe != Round.Probe.FULL_SIZE) {
                metrics.observePeerProbeRtt(rtt);
            }
            r.resolve(probe, Outcome.ok(rtt));
        } else {
            r.resolve(probe, Outcome.error(describe(batch.message(i))));
        }
    }

    private static String describe(IcmpMessage m) {
        String what = m.fragmentationNeeded() ? "fragmentation needed mtu " + m.nextHopMtu()
                : m.kind().name().toLowerCase(java.util.Locale.ROOT) + " code " + m.code();
        return "icmp " + what + " from " + m.from().getHostAddress();
    }

    private void advanceRounds(long now) throws NetlinkException {
        for (int i = active.size() - 1; i >= 0; i--) {
            Peer p = active.get(i);
            Round r = p.round;
            if (!r.phaseOver(now)) {
                continue;
            }
            for (int s : r.expire()) {
                pending.release(s);
            }
            if (r.needsSecondPhase()) {
                r.startSecondPhase(now + settings.timeout().toNanos());
                send(p, Round.Probe.RETRY, p.overlay, ProbeSettings.SMALL_SIZE);
                send(p, Round.Probe.UNDERLAY, p.underlay, ProbeSettings.SMALL_SIZE);
                continue;
            }
            Peer last = active.remove(active.size() - 1); // order does not matter: swap-remove
            if (i < active.size()) {
                active.set(i, last);
            }
            p.round = null;
            finish(p, r, now);
        }
    }

    private void finish(Peer p, Round r, long now) {
        PeerTarget t = p.target;
        String stale = null;
        if (!r.small().ok() && r.underlay() != null && r.underlay().ok()) {
            stale = entries.at(now).staleness(t).orElse(null);
        }
        Cause cause = Classifier.classify(r.small(), r.fullSize(), r.underlay(), stale != null).orElse(null);
        PeerStatus.State state = cause == null ? PeerStatus.State.REACHABLE : PeerStatus.State.UNREACHABLE;
        String detail = stale != null ? stale : cause == null ? "" : VerdictLog.failureDetail(r);
        PeerStatus before = p.status;
        Instant at = Instant.now();
        boolean same = before.state() == state && before.cause() == cause;
        PeerStatus after = new PeerStatus(t, state, cause, same ? before.since() : at, at, r.small(), r.fullSize(),
                r.underlay(), detail);
        int reachable = cause == null ? 1 : 0;
        if (p.reachable == null || p.reachableValue != reachable) { // a gauge holds its value: set on change only
            if (p.reachable == null) {
                p.reachable = metrics.peerReachableSeries(t.peer(), t.subnet());
            }
            p.reachable.accept(reachable);
            p.reachableValue = reachable;
        }
        if (cause != null) {
            if (failures[cause.ordinal()] == null) {
                failures[cause.ordinal()] = metrics.peerProbeFailureCounter(cause.label());
            }
            failures[cause.ordinal()].run();
        }
        // published last: whoever reads this verdict on /peers finds /metrics already saying the same
        p.status = after;
        if (!same) {
            VerdictLog.change(before, after);
        }
    }

    /** Stops the thread (within one tick), then closes the sockets. */
    @Override
    public void close() {
        running = false;
        LockSupport.unpark(thread);
        try {
            thread.join(Duration.ofSeconds(2).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        socket.close();
        nl.close();
        LOG.info("peer probing stopped");
    }
}
