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
 * {@link TrainCoalescer}). {@code JFLANNEL_UDP_KERNEL} attaches the kernel datapath
 * ({@link KernelPath}): {@code gpe} (the default) encapsulates in a tc program on flannel0's egress
 * and decapsulates through a VXLAN-GPE device (docs/benchmarks.md, "udp, session 11"), {@code encap}
 * (the default before, and the fallback where that device cannot be made) leaves decapsulation to the packet
 * threads, {@code full} (or {@code 1}) decapsulates in the
 * kernel too, {@code off} (or {@code 0}) leaves everything to the packet threads. The default was
 * decided by a same-run A/B on a switched underlay (docs/benchmarks.md, "udp, session 9"): the
 * kernel's encapsulation saves the sending node two copies and the segmenting, while the packet
 * threads hand the receiving pod whole super-packets, which the kernel's decapsulation cannot yet.
 * Encapsulating needs the offloads (a whole super-packet from a peer is written as one TSO packet).
 *
 * @param kernel      the kernel datapath's programs are attached (encapsulation at least)
 * @param kernelDecap with {@code kernel}: the kernel decapsulates too (else the packet threads do)
 */
public record UdpOptions(boolean offload, boolean gro, boolean coalesce, int queues, boolean txHandoff,
        boolean verifyChecksums, boolean kernel, boolean kernelDecap, boolean kernelGpe) {
    static final int MAX_QUEUES = 16;

    public UdpOptions {
        if (queues < 1 || queues > MAX_QUEUES) {
            throw new IllegalArgumentException("udp queues: expected 1.." + MAX_QUEUES + ", got " + queues);
        }
        kernelDecap = kernel && kernelDecap;
        kernelGpe = kernel && !kernelDecap && kernelGpe;
    }

    public UdpOptions(boolean offload, boolean gro, boolean coalesce, int queues, boolean txHandoff,
            boolean verifyChecksums, boolean kernel, boolean kernelDecap) {
        this(offload, gro, coalesce, queues, txHandoff, verifyChecksums, kernel, kernelDecap, false);
    }

    /** {@code kernel} true means both directions in the kernel, as before {@code kernelDecap} existed. */
    public UdpOptions(boolean offload, boolean gro, boolean coalesce, int queues, boolean txHandoff,
            boolean verifyChecksums, boolean kernel) {
        this(offload, gro, coalesce, queues, txHandoff, verifyChecksums, kernel, kernel);
    }

    /** The userspace fast path with everything on, one queue per CPU (at most 4); no kernel datapath. */
    public static UdpOptions defaults() {
        return new UdpOptions(true, true, true, defaultQueues(), false, false, false);
    }

    /** {@link #defaults()} plus the kernel datapath both ways ({@code JFLANNEL_UDP_KERNEL=full}). */
    public static UdpOptions withKernel() {
        return new UdpOptions(true, true, true, defaultQueues(), false, false, true, true);
    }

    /**
     * As shipped ({@code JFLANNEL_UDP_KERNEL} unset): {@link #defaults()} with the kernel encapsulating, and
     * decapsulating through a VXLAN-GPE device ({@code gpe}; {@code encap} where the device cannot be made).
     */
    public static UdpOptions shipped() {
        return withKernelGpe();
    }

    /** {@link #defaults()} plus the kernel's encapsulation only ({@code JFLANNEL_UDP_KERNEL=encap}). */
    public static UdpOptions withKernelEncap() {
        return new UdpOptions(true, true, true, defaultQueues(), false, false, true, false);
    }

    /** {@link #defaults()} plus the kernel's encapsulation, and decapsulation through a VXLAN-GPE device ({@code gpe}). */
    public static UdpOptions withKernelGpe() {
        return new UdpOptions(true, true, true, defaultQueues(), false, false, true, false, true);
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

    /** The same options with the kernel datapath on (both ways) or off. */
    public UdpOptions kernel(boolean on) {
        return new UdpOptions(offload, gro, coalesce, queues, txHandoff, verifyChecksums, on, on);
    }

    public static UdpOptions fromEnvironment(Map<String, String> env) throws ConfigException {
        boolean offload = flag(env, "JFLANNEL_UDP_OFFLOAD");
        String kernel = kernel(env, "JFLANNEL_UDP_KERNEL", offload);
        return new UdpOptions(offload, flag(env, "JFLANNEL_UDP_GRO"),
                flag(env, "JFLANNEL_UDP_COALESCE"), queues(env, "JFLANNEL_UDP_QUEUES"),
                flag(env, "JFLANNEL_UDP_TX_HANDOFF", false), flag(env, "JFLANNEL_UDP_VERIFY_CSUM", false),
                !kernel.equals("off"), kernel.equals("full"), kernel.equals("gpe"));
    }

    /**
     * off, encap, gpe or full; unset: gpe, or off without the offloads (the packet threads could not
     * write a peer's whole super-packets to flannel0).
     */
    private static String kernel(Map<String, String> env, String name, boolean offload) throws ConfigException {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return offload ? "gpe" : "off";
        }
        String mode = switch (v.strip().toLowerCase(Locale.ROOT)) {
            case "0", "false", "off", "no" -> "off";
            case "1", "true", "on", "yes", "full" -> "full";
            case "encap" -> "encap";
            case "gpe" -> "gpe";
            default -> throw new ConfigException(name, name + ": expected off, encap, gpe or full (0/1 for off/full), got \"" + v + "\"");
        };
        if ((mode.equals("encap") || mode.equals("gpe")) && !offload) {
            throw new ConfigException(name, name + "=encap needs JFLANNEL_UDP_OFFLOAD on (whole super-packets from peers)");
        }
        return mode;
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
                + " kernel=" + (!kernel ? "off" : kernelDecap ? "full" : kernelGpe ? "gpe" : "encap");
    }
}
