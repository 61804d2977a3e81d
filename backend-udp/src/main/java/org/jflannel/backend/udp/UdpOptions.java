package org.jflannel.backend.udp;

import java.util.Locale;
import java.util.Map;
import org.jflannel.core.ConfigException;
import org.jflannel.packet.TrainCoalescer;

/**
 * The udp backend's fast-path switches (DESIGN §6), each on by default and each falling back by
 * itself when the kernel refuses it. Read from the environment so the daemon's flags stay
 * upstream's: {@code JFLANNEL_UDP_OFFLOAD} (flannel0 with IFF_VNET_HDR + TSO, and UDP GSO),
 * {@code JFLANNEL_UDP_GRO} (UDP GRO on the socket), {@code JFLANNEL_UDP_COALESCE} (received TCP
 * segments merged into super-packets; needs the offloads), {@code JFLANNEL_UDP_QUEUES} (TUN queues
 * and SO_REUSEPORT sockets, one reader thread each). All off and one queue is upstream's plain path.
 * {@code JFLANNEL_UDP_TX_HANDOFF} (off by default) brings back the former hand-off of every send to a
 * sender thread, for the benchmark's comparison only. {@code JFLANNEL_UDP_VERIFY_CSUM} (off by
 * default) makes the coalescer sum every received TCP segment's payload to verify its checksum
 * before merging; off, it relies on the outer UDP checksum the kernel verified (see
 * {@link TrainCoalescer}). {@code JFLANNEL_UDP_KERNEL} (off by default, opt-in) attaches the
 * kernel datapath ({@link KernelPath}): encapsulation and decapsulation in tc programs, the packet
 * threads carrying what those leave to them. Off by default since a same-run A/B on a switched
 * underlay (docs/benchmarks.md, "udp default, session 6"): the packet threads carried more, with far
 * fewer retransmits, and they send every peer upstream's exact datagrams.
 */
public record UdpOptions(boolean offload, boolean gro, boolean coalesce, int queues, boolean txHandoff,
        boolean verifyChecksums, boolean kernel) {
    static final int MAX_QUEUES = 16;

    public UdpOptions {
        if (queues < 1 || queues > MAX_QUEUES) {
            throw new IllegalArgumentException("udp queues: expected 1.." + MAX_QUEUES + ", got " + queues);
        }
    }

    /** The userspace fast path with everything on, one queue per CPU (at most 4); no kernel datapath. */
    public static UdpOptions defaults() {
        return new UdpOptions(true, true, true, defaultQueues(), false, false, false);
    }

    /** {@link #defaults()} plus the kernel datapath ({@code JFLANNEL_UDP_KERNEL=1}). */
    public static UdpOptions withKernel() {
        return new UdpOptions(true, true, true, defaultQueues(), false, false, true);
    }

    public UdpOptions(boolean offload, boolean gro, boolean coalesce, int queues) {
        this(offload, gro, coalesce, queues, false, false, false);
    }

    public UdpOptions(boolean offload, boolean gro, boolean coalesce, int queues, boolean txHandoff) {
        this(offload, gro, coalesce, queues, txHandoff, false, false);
    }

    public UdpOptions(boolean offload, boolean gro, boolean coalesce, int queues, boolean txHandoff,
            boolean verifyChecksums) {
        this(offload, gro, coalesce, queues, txHandoff, verifyChecksums, false);
    }

    /** Upstream's path: one packet per read, write and datagram; one queue. */
    public static UdpOptions plain() {
        return new UdpOptions(false, false, false, 1, false, false, false);
    }

    /** The same options with the kernel datapath on or off. */
    public UdpOptions kernel(boolean on) {
        return new UdpOptions(offload, gro, coalesce, queues, txHandoff, verifyChecksums, on);
    }

    public static UdpOptions fromEnvironment(Map<String, String> env) throws ConfigException {
        return new UdpOptions(flag(env, "JFLANNEL_UDP_OFFLOAD"), flag(env, "JFLANNEL_UDP_GRO"),
                flag(env, "JFLANNEL_UDP_COALESCE"), queues(env, "JFLANNEL_UDP_QUEUES"),
                flag(env, "JFLANNEL_UDP_TX_HANDOFF", false), flag(env, "JFLANNEL_UDP_VERIFY_CSUM", false),
                flag(env, "JFLANNEL_UDP_KERNEL", false));
    }

    static int defaultQueues() {
        return Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
    }

    private static boolean flag(Map<String, String> env, String name) throws ConfigException {
        return flag(env, name, true);
    }

    private static boolean flag(Map<String, String> env, String name, boolean dflt) throws ConfigException {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return dflt;
        }
        return switch (v.strip().toLowerCase(Locale.ROOT)) {
            case "1", "true", "on", "yes" -> true;
            case "0", "false", "off", "no" -> false;
            default -> throw new ConfigException(name, name + ": expected on or off (1/0, true/false), got \"" + v + "\"");
        };
    }

    private static int queues(Map<String, String> env, String name) throws ConfigException {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return defaultQueues();
        }
        try {
            int n = Integer.parseInt(v.strip());
            if (n >= 1 && n <= MAX_QUEUES) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new ConfigException(name, name + ": expected 1.." + MAX_QUEUES + ", got \"" + v + "\"");
    }

    @Override
    public String toString() {
        return "offload=" + offload + " gro=" + gro + " coalesce=" + coalesce + " queues=" + queues
                + (txHandoff ? " txHandoff=true" : "") + (verifyChecksums ? " verifyChecksums=true" : "")
                + " kernel=" + kernel;
    }
}
