package org.jflannel.backend.udp;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.bpf.BpfLink;
import org.jflannel.linuxnet.bpf.BpfMap;
import org.jflannel.linuxnet.bpf.BpfProgram;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours: {@link KernelPath}'s decapsulation through a VXLAN-GPE device ({@link UdpKernelMode#GPE}, the default). The
 * external interface's ingress program rewrites a peer kernel's datagram into a VXLAN-GPE one for a local external
 * GPE device (UDP {@link #DEFAULT_PORT} unless {@code JFLANNEL_UDP_GPE_PORT} says otherwise), whose receive path
 * decapsulates it and clears the kernel's tunnel marks; a gate program on the device's ingress hands what our program
 * marked to flannel0 ({@link KernelPrograms#decap},
 * {@link KernelPrograms#gpeGate}; docs/benchmarks.md, "udp, session 11").
 *
 * <p>Made by {@link #load} (the device, its gate, and three ingress programs: the trial one attached first, the one
 * that rewrites every datagram, and {@link UdpKernelMode#ENCAP}'s to fall back to), then watched by {@link #check} on
 * the probe's thread, which swaps the external interface's ingress program ({@link KernelPath.IngressLink}) from the
 * trial one to the full one once the path has delivered, or to the fallback where it does not deliver.
 *
 * <p>Logs through {@link KernelPath}'s logger: its lines are the kernel datapath's, as before this class was split off
 * (operators and tests look for them).
 */
final class GpePath {
    private static final Logger LOG = LoggerFactory.getLogger(KernelPath.class);

    /**
     * The GPE device's UDP port unless {@code JFLANNEL_UDP_GPE_PORT} moves it (IANA's for VXLAN-GPE);
     * {@link KernelPrograms#decap} refuses datagrams to it from outside.
     */
    static final int DEFAULT_PORT = 4790;
    /** {@link #check}'s window, and the datagrams rewritten in one with none delivered that make it fall back. */
    static final long CHECK_NANOS = 3_000_000_000L;
    static final int LOST_TO_FALL_BACK = 3;

    /** A decapsulating program for the external interface's ingress ({@link KernelPrograms#decap} for this node). */
    interface Decap {
        byte[] program(KernelPrograms.Deliver deliver, int gpePort, int gpeMark, BpfMap trial);
    }

    /**
     * The ingress programs {@link #load} made: {@code trial} to attach first (one datagram a second rewritten, the rest
     * to the socket), {@code full} (every datagram rewritten) and {@code fallback} ({@link UdpKernelMode#ENCAP}'s).
     */
    record Programs(int port, BpfProgram trial, BpfProgram full, BpfProgram fallback) {
    }

    private final KernelPath.IngressLink ingress;
    /** The GPE device's UDP port, for the log lines. */
    private final int port;
    /** Until {@link #check} falls back: the encapsulate-only ingress program, loaded at open. */
    private volatile BpfProgram fallback;
    /**
     * While the path is on trial (a trial program attached, rewriting one datagram a second): the program that
     * rewrites every one, attached by {@link #check} once the gate has delivered one; null after.
     */
    private volatile BpfProgram full;
    private long windowStart;
    private long windowRewritten;
    private long windowDelivered;

    /** Watches the path whose {@code programs} are attached to {@code ingress} (the trial one first). */
    GpePath(Programs programs, KernelPath.IngressLink ingress) {
        this.ingress = ingress;
        this.port = programs.port();
        this.full = programs.full();
        this.fallback = programs.fallback();
    }

    /** The GPE device's name: flannel0's with {@code -gpe}, or {@code jfl-gpe} where that is too long. */
    static String deviceName(String tun) {
        String n = tun + "-gpe";
        return n.length() <= 15 ? n : "jfl-gpe";
    }

    /**
     * Makes the device and its gate ({@link #device}) and loads the three ingress programs; null, after one line, where
     * the device cannot be made ({@link UdpKernelMode#ENCAP} then). What it made is in {@code owned}; a program the kernel
     * refuses throws (the whole datapath is then unavailable, as for any of {@link KernelPath}'s programs).
     */
    static Programs load(RtNetlink nl, List<AutoCloseable> owned, String tun, int tunIndex, int port, BpfMap counters,
            Decap decap) throws NetlinkException {
        int mark = device(nl, owned, tun, tunIndex, port, counters);
        if (mark == 0) {
            return null;
        }
        BpfProgram full = KernelPath.keep(owned, BpfProgram.loadClassifier("jfl_udp_decap",
                decap.program(KernelPrograms.Deliver.GPE, port, mark, null)));
        // on trial first: a firewall that drops the GPE port then costs a few datagrams
        BpfMap trialMap = KernelPath.keep(owned, BpfMap.create(BpfMap.Type.ARRAY, "jfl_udp_trial", 4, 8, 1));
        BpfProgram trial = KernelPath.keep(owned, BpfProgram.loadClassifier("jfl_udp_decap",
                decap.program(KernelPrograms.Deliver.GPE, port, mark, trialMap)));
        BpfProgram fallback = KernelPath.keep(owned, BpfProgram.loadClassifier("jfl_udp_decap",
                decap.program(KernelPrograms.Deliver.SOCKET, 0, 0, null)));
        return new Programs(port, trial, full, fallback);
    }

    /**
     * Makes the VXLAN-GPE device (removing a stale one of ours by name first), brings it up and attaches the gate
     * ({@link KernelPrograms#gpeGate}) to its ingress; returns the mark the gate wants, or 0, after one line,
     * where the kernel refuses (no VXLAN, the port taken): {@link UdpKernelMode#ENCAP} then. What it made is in
     * {@code owned} on success; on failure it is removed here.
     */
    private static int device(RtNetlink nl, List<AutoCloseable> owned, String tun, int tunIndex, int port, BpfMap counters) {
        String name = deviceName(tun);
        List<AutoCloseable> mine = new ArrayList<>();
        try {
            if (nl.link(name).isPresent()) {
                nl.deleteLink(name);
            }
            nl.createVxlanGpe(name, port);
            int index = nl.link(name).map(Link::index)
                    .orElseThrow(() -> new NetlinkException("RTM_GETLINK", name, 19, "gpe device vanished"));
            mine.add(new AutoCloseable() {
                @Override
                public void close() throws NetlinkException {
                    nl.deleteLink(index);
                }

                @Override
                public String toString() {
                    return "gpe device " + name;
                }
            });
            int mark = 0;
            while (mark == 0) {
                mark = new SecureRandom().nextInt();
            }
            BpfProgram gate = KernelPath.keep(mine, BpfProgram.loadClassifier("jfl_udp_gpe",
                    KernelPrograms.gpeGate(counters, mark, tunIndex)));
            KernelPath.keep(mine, BpfLink.attach(gate, index, BpfLink.Hook.TCX_INGRESS));
            nl.setUp(index);
            owned.addAll(mine);
            LOG.info("udp kernel decapsulation through a vxlan-gpe device dev={} port={}", name, port);
            return mark;
        } catch (NetlinkException | RuntimeException e) {
            LOG.warn("udp vxlan-gpe device unavailable, the packet threads decapsulate dev={} port={} error={}",
                    name, port, e.getMessage());
            Collections.reverse(mine);
            KernelPath.closeAll(mine);
            return 0;
        }
    }

    /** Whether peers' kernel datagrams are decapsulated through the VXLAN-GPE device (until {@link #check} falls back). */
    boolean active() {
        return fallback != null;
    }

    /** Whether the path has delivered and every peer kernel datagram now takes it (its trial is over). */
    boolean confirmed() {
        return fallback != null && full == null;
    }

    /**
     * Called every few hundred milliseconds ({@link KernelProbe}'s thread) with the programs' counters: datagrams
     * {@code rewritten} for the GPE device ({@link KernelPrograms#COUNT_DECAP}) and {@code delivered} to flannel0 by
     * its gate ({@link KernelPrograms#COUNT_GATE}). On trial (the node starts so: one datagram a second rewritten, the
     * rest to the socket): the first datagram through the gate attaches the program that rewrites them all;
     * {@link #LOST_TO_FALL_BACK} rewritten and none delivered fall back (below). After the trial: when a window of
     * {@link #CHECK_NANOS} saw at least {@link #LOST_TO_FALL_BACK} datagrams rewritten for the GPE device and none
     * reach flannel0 through its gate, something between them drops them (a host firewall that refuses the device's UDP
     * port in its INPUT chain, the device taken down), and the ingress program is swapped for the
     * encapsulate-only one: the packet threads decapsulate from then on ({@link UdpKernelMode#ENCAP}), one line says so.
     */
    void check(long now, long rewritten, long delivered) {
        if (fallback == null) {
            return;
        }
        BpfProgram f = full;
        if (f != null) {
            if (delivered > 0) {
                if (ingress.swap(f)) {
                    full = null;
                    windowStart = now;
                    windowRewritten = rewritten;
                    windowDelivered = delivered;
                    LOG.info("udp vxlan-gpe path delivers, the kernel decapsulates every peer datagram rewritten={} delivered={}",
                            rewritten, delivered);
                }
            } else if (rewritten >= LOST_TO_FALL_BACK) {
                fallBack("its trial delivered nothing (does the host's firewall accept UDP " + port + "?)",
                        rewritten, delivered);
            }
            return;
        }
        if (windowStart != 0 && now - windowStart < CHECK_NANOS) {
            return;
        }
        boolean lost = windowStart != 0 && rewritten - windowRewritten >= LOST_TO_FALL_BACK && delivered == windowDelivered;
        windowStart = now;
        windowRewritten = rewritten;
        windowDelivered = delivered;
        if (lost) {
            fallBack("it delivers nothing (does the host's firewall accept UDP " + port + "?)", rewritten, delivered);
        }
    }

    /**
     * Swaps the ingress program for the encapsulate-only one ({@link UdpKernelMode#ENCAP}: the packet threads
     * decapsulate from then on), attaching the new link before the old one goes so that no datagram passes unhandled;
     * one line says why. A failed swap is logged and left to the next call.
     */
    void fallBack(String why, long rewritten, long delivered) {
        BpfProgram f = fallback;
        if (f == null) {
            return;
        }
        if (ingress.swap(f)) {
            fallback = null;
            full = null;
            LOG.warn("udp vxlan-gpe path left, the packet threads decapsulate: {} rewritten={} delivered={}",
                    why, rewritten, delivered);
        }
    }
}
