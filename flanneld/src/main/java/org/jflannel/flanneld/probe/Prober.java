package org.jflannel.flanneld.probe;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import org.jflannel.core.LeaseEvent;
import org.jflannel.flanneld.health.Metrics;
import org.jflannel.linuxnet.IcmpMessage;
import org.jflannel.linuxnet.IcmpSocket;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours (issue 12): probes every peer through the overlay on one named thread, {@code peer-probe},
 * and says why a peer is unreachable. Owns that thread, one raw ICMP socket and one rtnetlink
 * socket (for dumps of the VXLAN device's entries), all opened in the daemon's network namespace;
 * {@link #close()} releases them. Lease changes arrive through {@link #apply} from the lease-events
 * thread and are taken over by the probe thread at its next tick; /peers reads {@link #statuses()}.
 */
public final class Prober implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Prober.class);
    private static final Duration TICK = Duration.ofMillis(100);
    /** Kernel dumps for the staleness check are shared by the peers classified within this window. */
    private static final long DUMP_TTL_NANOS = Duration.ofSeconds(2).toNanos();

    private final ProbeSettings settings;
    private final Metrics metrics;
    private final ProbeSchedule schedule;
    private final IcmpSocket socket;
    private final RtNetlink nl;
    private final int id = ThreadLocalRandom.current().nextInt(1, 0x10000);
    private final ConcurrentLinkedQueue<List<LeaseEvent>> inbox = new ConcurrentLinkedQueue<>();
    private final Map<String, PeerStatus> statuses = new ConcurrentHashMap<>();
    // probe thread only:
    private final Map<String, PeerTarget> peers = new HashMap<>();
    private final Map<String, Long> dueAt = new HashMap<>();
    private final PriorityQueue<Due> due = new PriorityQueue<>();
    /** Linked: iterated every tick, and a hash map's iteration costs its largest size (2,000 rounds at start-up). */
    private final Map<String, Round> rounds = new java.util.LinkedHashMap<>();
    private long nextAdvance;
    private final Map<Integer, Pending> pending = new HashMap<>();
    private int seq;
    private KernelEntries dump;
    private long dumpedAt;
    private final Thread thread;
    private volatile boolean running = true;

    private record Due(long at, String key) implements Comparable<Due> {
        @Override
        public int compareTo(Due o) {
            return Long.compare(at, o.at);
        }
    }

    private record Pending(Round round, Round.Probe probe, long sentNanos) {
    }

    private Prober(ProbeSettings settings, Metrics metrics, IcmpSocket socket, RtNetlink nl) {
        this.settings = settings;
        this.metrics = metrics;
        this.socket = socket;
        this.nl = nl;
        this.schedule = new ProbeSchedule(settings.interval(), 0.1, ThreadLocalRandom.current());
        this.thread = new Thread(this::loop, "peer-probe");
        this.thread.setDaemon(true);
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
                settings.fullSize(), settings.vxlanDevice() == null ? "flannel0" : settings.vxlanDevice());
        return p;
    }

    /** Lease changes (already diffed, own lease excluded); called on the lease-events thread, never blocks. */
    public void apply(List<LeaseEvent> diff) {
        inbox.add(List.copyOf(diff));
    }

    /** The latest verdict per peer, for /peers. */
    public Collection<PeerStatus> statuses() {
        return List.copyOf(statuses.values());
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
            while (running) {
                takeLeaseChanges();
                long now = System.nanoTime();
                startDueRounds(now);
                if (now - nextAdvance >= 0) { // rounds end on the tick, not on every reply
                    advanceRounds(now);
                    nextAdvance = now + TICK.toNanos();
                }
                socket.receive((int) TICK.toMillis()).ifPresent(this::onMessage); // one recv per message
            }
        } catch (NetlinkException | RuntimeException e) {
            if (running) {
                LOG.error("peer probing stopped error={}", e.toString());
            }
        }
    }

    private void takeLeaseChanges() {
        List<LeaseEvent> batch;
        while ((batch = inbox.poll()) != null) {
            for (LeaseEvent e : batch) {
                String key = e.lease().key();
                Optional<PeerTarget> t = e.type() == LeaseEvent.Type.ADDED ? PeerTarget.of(e.lease()) : Optional.empty();
                if (t.isEmpty()) {
                    forget(key);
                    continue;
                }
                PeerTarget old = peers.put(key, t.get());
                if (old == null) {
                    long at = schedule.firstDue(System.nanoTime());
                    dueAt.put(key, at);
                    due.add(new Due(at, key));
                    statuses.put(key, PeerStatus.unknown(t.get(), Instant.now()));
                } else {
                    if (!old.underlay().equals(t.get().underlay())) {
                        metrics.removePeer(old.peer(), old.subnet()); // the label changes with the public IP
                    }
                    statuses.computeIfPresent(key, (k, s) -> new PeerStatus(t.get(), s.state(), s.cause(), s.since(),
                            s.lastProbe(), s.small(), s.fullSize(), s.underlay(), s.detail()));
                }
            }
        }
    }

    private void forget(String key) {
        PeerTarget old = peers.remove(key);
        dueAt.remove(key);
        rounds.remove(key);
        statuses.remove(key);
        if (old != null) {
            metrics.removePeer(old.peer(), old.subnet());
        }
    }

    private void startDueRounds(long now) {
        int budget = ProbeSchedule.maxStartsPerTick(peers.size(), TICK, settings.interval());
        while (budget > 0 && !due.isEmpty() && due.peek().at() - now <= 0) {
            Due d = due.poll();
            Long current = dueAt.get(d.key());
            if (current == null || current != d.at()) {
                continue; // the peer went away or was rescheduled
            }
            PeerStatus st = statuses.get(d.key());
            long next = schedule.nextDue(d.at(), st != null && st.state() == PeerStatus.State.UNREACHABLE);
            dueAt.put(d.key(), next);
            due.add(new Due(next, d.key()));
            if (!rounds.containsKey(d.key())) { // a round still running is not doubled
                startRound(peers.get(d.key()), now);
                budget--;
            }
        }
    }

    private void startRound(PeerTarget t, long now) {
        Round r = new Round(t, now + settings.timeout().toNanos());
        rounds.put(t.key(), r);
        send(r, Round.Probe.SMALL, t.overlay(), ProbeSettings.SMALL_SIZE);
        send(r, Round.Probe.FULL_SIZE, t.overlay(), settings.fullSize());
    }

    private void send(Round r, Round.Probe probe, java.net.Inet4Address dst, int size) {
        int s = nextSeq();
        try {
            socket.sendEcho(dst, id, s, size);
            pending.put(s, new Pending(r, probe, System.nanoTime()));
            r.sent(probe, s);
        } catch (NetlinkException e) {
            r.resolve(probe, Outcome.error("send " + e.errnoName()));
        }
    }

    private int nextSeq() {
        do {
            seq = (seq + 1) & 0xffff;
        } while (pending.containsKey(seq));
        return seq;
    }

    private void onMessage(IcmpMessage msg) {
        Pending p = msg.id() == id ? pending.get(msg.seq()) : null;
        if (p == null || rounds.get(p.round().target.key()) != p.round()) {
            return; // another pinger's, or a round that is over
        }
        java.net.Inet4Address expected = p.probe() == Round.Probe.UNDERLAY ? p.round().target.underlay()
                : p.round().target.overlay();
        if (!msg.target().equals(expected)) {
            return;
        }
        pending.remove(msg.seq());
        if (msg.kind() == IcmpMessage.Kind.ECHO_REPLY) {
            double rtt = (System.nanoTime() - p.sentNanos()) / 1e9;
            if (p.probe() != Round.Probe.UNDERLAY && p.probe() != Round.Probe.FULL_SIZE) {
                metrics.observePeerProbeRtt(rtt);
            }
            p.round().resolve(p.probe(), Outcome.ok(rtt));
        } else {
            p.round().resolve(p.probe(), Outcome.error(describe(msg)));
        }
    }

    private static String describe(IcmpMessage m) {
        String what = m.fragmentationNeeded() ? "fragmentation needed mtu " + m.nextHopMtu()
                : m.kind().name().toLowerCase(java.util.Locale.ROOT) + " code " + m.code();
        return "icmp " + what + " from " + m.from().getHostAddress();
    }

    private void advanceRounds(long now) {
        for (Iterator<Round> it = rounds.values().iterator(); it.hasNext(); ) {
            Round r = it.next();
            if (!r.phaseOver(now)) {
                continue;
            }
            for (int s : r.expire()) {
                pending.remove(s);
            }
            if (r.needsSecondPhase()) {
                r.startSecondPhase(now + settings.timeout().toNanos());
                send(r, Round.Probe.RETRY, r.target.overlay(), ProbeSettings.SMALL_SIZE);
                send(r, Round.Probe.UNDERLAY, r.target.underlay(), ProbeSettings.SMALL_SIZE);
                continue;
            }
            it.remove();
            finish(r, now);
        }
    }

    private void finish(Round r, long now) {
        PeerTarget t = r.target;
        Optional<String> stale = Optional.empty();
        if (!r.small().ok() && r.underlay() != null && r.underlay().ok()) {
            stale = entries(now).staleness(t);
        }
        Optional<Cause> cause = Classifier.classify(r.small(), r.fullSize(), r.underlay(), stale.isPresent());
        PeerStatus.State state = cause.isEmpty() ? PeerStatus.State.REACHABLE : PeerStatus.State.UNREACHABLE;
        String detail = stale.orElseGet(() -> cause.isEmpty() ? "" : failureDetail(r));
        PeerStatus before = statuses.get(t.key());
        if (before == null) {
            return; // removed meanwhile
        }
        Instant at = Instant.now();
        boolean same = before.state() == state && before.cause() == cause.orElse(null);
        PeerStatus after = new PeerStatus(t, state, cause.orElse(null), same ? before.since() : at, at, r.small(),
                r.fullSize(), r.underlay(), detail);
        statuses.put(t.key(), after);
        metrics.setPeerReachable(t.peer(), t.subnet(), cause.isEmpty());
        cause.ifPresent(c -> metrics.peerProbeFailure(c.label()));
        if (!same) {
            logChange(before, after);
        }
    }

    private static String failureDetail(Round r) {
        return "small=" + r.small().describe() + " fullSize=" + r.fullSize().describe()
                + (r.underlay() == null ? "" : " underlay=" + r.underlay().describe());
    }

    private KernelEntries entries(long now) {
        if (settings.vxlanDevice() == null) {
            return KernelEntries.NONE;
        }
        if (dump == null || now - dumpedAt > DUMP_TTL_NANOS) {
            try {
                dump = KernelEntries.dump(nl, settings.vxlanDevice());
            } catch (IOException e) {
                LOG.warn("peer probe entry dump failed device={} error={}", settings.vxlanDevice(), e.getMessage());
                dump = KernelEntries.NONE;
            }
            dumpedAt = now;
        }
        return dump;
    }

    /** One line per state change, never per probe; the first "reachable" of each peer only at DEBUG (thousands at start). */
    private static void logChange(PeerStatus before, PeerStatus after) {
        PeerTarget t = after.target();
        if (after.state() == PeerStatus.State.UNREACHABLE) {
            LOG.warn("peer unreachable peer={} subnet={} cause={} was={} {}", t.peer(), t.subnet(), after.cause().label(),
                    before.verdict(), after.detail());
        } else if (before.state() == PeerStatus.State.UNKNOWN) {
            LOG.debug("peer reachable peer={} subnet={} rttMs={}", t.peer(), t.subnet(), rttMs(after));
        } else {
            LOG.info("peer reachable peer={} subnet={} was={} rttMs={}", t.peer(), t.subnet(), before.verdict(), rttMs(after));
        }
    }

    private static String rttMs(PeerStatus s) {
        return String.format(java.util.Locale.ROOT, "%.3f", s.small().rttSeconds() * 1000);
    }

    /** Stops the thread (within one tick), then closes the sockets. */
    @Override
    public void close() {
        running = false;
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
