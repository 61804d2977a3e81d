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
 * {@link TrainCoalescer}). {@code JFLANNEL_UDP_KERNEL} picks the kernel datapath's {@link UdpKernelMode}
 * ({@link KernelPath}): {@code gpe} (the default) encapsulates in a tc program on flannel0's egress
 * and decapsulates through a VXLAN-GPE device, {@code encap} (the default before, and the fallback
 * where that device cannot be made or does not deliver) leaves decapsulation to the packet threads,
 * {@code full} (or {@code 1}) decapsulates in the kernel with adjust_room, {@code off} (or {@code 0})
 * leaves everything to the packet threads. The default was decided by same-run A/Bs against
 * {@code encap} and kernel VXLAN on a switched underlay (docs/benchmarks.md, "udp, session 11"): the
 * kernel's own tunnel receive path hands the receiving pod whole super-packets with no copy, which
 * {@code full}'s adjust_room cannot on these kernels, and the sending side is {@code encap}'s (two
 * copies and the segmenting saved; "udp, session 9"). Encapsulating needs the offloads (a whole
 * super-packet from a peer is written as one TSO packet), so {@code encap} and {@code gpe} are refused
 * without them and an unset variable then means {@code off}. {@code JFLANNEL_UDP_GPE_PORT} moves the local
 * VXLAN-GPE device's UDP port off {@link GpePath#DEFAULT_PORT} (it never appears on the wire: the external
 * interface's program rewrites a peer's datagram to it on the node itself); it must differ from the backend's
 * {@code Port} ({@link UdpBackend#checkGpePort}).
 *
 * @param kernel  the kernel datapath's mode ({@link UdpKernelMode#OFF}: none)
 * @param gpePort with {@link UdpKernelMode#GPE}: the VXLAN-GPE device's local UDP port
 */
public record UdpOptions(boolean offload, boolean gro, boolean coalesce, int queues, boolean txHandoff,
        boolean verifyChecksums, UdpKernelMode kernel, int gpePort) {
    static final int MAX_QUEUES = 16;
    static final String KERNEL_VARIABLE = "JFLANNEL_UDP_KERNEL";
    static final String GPE_PORT_VARIABLE = "JFLANNEL_UDP_GPE_PORT";

    public UdpOptions {
        if (queues < 1 || queues > MAX_QUEUES) {
            throw new IllegalArgumentException("udp queues: expected 1.." + MAX_QUEUES + ", got " + queues);
        }
        if (kernel == null) {
            throw new IllegalArgumentException("udp kernel: expected a mode (off, encap, gpe or full), got null");
        }
        if (gpePort < 1 || gpePort > 0xffff) {
            throw new IllegalArgumentException("udp gpe port: expected 1..65535, got " + gpePort);
        }
    }

    /** The given switches, without the sender thread, the checksum pass or the kernel datapath. */
    public UdpOptions(boolean offload, boolean gro, boolean coalesce, int queues) {
        this(offload, gro, coalesce, queues, false, false, UdpKernelMode.OFF, GpePath.DEFAULT_PORT);
    }

    /** The userspace fast path with everything on, one queue per CPU (at most 4); no kernel datapath. */
    public static UdpOptions defaults() {
        return defaults(UdpKernelMode.OFF);
    }

    /** {@link #defaults()} with the kernel datapath in {@code kernel} mode. */
    public static UdpOptions defaults(UdpKernelMode kernel) {
        return new UdpOptions(true, true, true, defaultQueues(), false, false, kernel, GpePath.DEFAULT_PORT);
    }

    /** {@link #defaults()} plus the kernel datapath both ways ({@code JFLANNEL_UDP_KERNEL=full}). */
    public static UdpOptions withKernel() {
        return defaults(UdpKernelMode.FULL);
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
        return defaults(UdpKernelMode.ENCAP);
    }

    /** {@link #defaults()} plus the kernel's encapsulation, and decapsulation through a VXLAN-GPE device ({@code gpe}). */
    public static UdpOptions withKernelGpe() {
        return defaults(UdpKernelMode.GPE);
    }

    /** Upstream's path: one packet per read, write and datagram; one queue. */
    public static UdpOptions plain() {
        return new UdpOptions(false, false, false, 1);
    }

    /** The same options with the kernel datapath in {@code mode}. */
    public UdpOptions withKernelMode(UdpKernelMode mode) {
        return new UdpOptions(offload, gro, coalesce, queues, txHandoff, verifyChecksums, mode, gpePort);
    }

    /** The same options with the VXLAN-GPE device on UDP {@code port}. */
    public UdpOptions withGpePort(int port) {
        return new UdpOptions(offload, gro, coalesce, queues, txHandoff, verifyChecksums, kernel, port);
    }

    /**
     * Whether the kernel datapath is to be attached: its mode is not {@code off}, and the offloads it needs are on
     * (a record built in code may ask for {@code encap} without them; {@link #fromEnvironment} refuses that).
     */
    boolean kernelAttachable() {
        return kernel.attached() && (offload || !kernel.needsOffload());
    }

    public static UdpOptions fromEnvironment(Map<String, String> env) throws ConfigException {
        boolean offload = flag(env, "JFLANNEL_UDP_OFFLOAD");
        return new UdpOptions(offload, flag(env, "JFLANNEL_UDP_GRO"),
                flag(env, "JFLANNEL_UDP_COALESCE"), queues(env, "JFLANNEL_UDP_QUEUES"),
                flag(env, "JFLANNEL_UDP_TX_HANDOFF", false), flag(env, "JFLANNEL_UDP_VERIFY_CSUM", false),
                kernel(env, KERNEL_VARIABLE, offload), port(env, GPE_PORT_VARIABLE, GpePath.DEFAULT_PORT));
    }

    /**
     * off, encap, gpe or full; unset: gpe, or off without the offloads (the packet threads could not
     * write a peer's whole super-packets to flannel0).
     */
    private static UdpKernelMode kernel(Map<String, String> env, String name, boolean offload) throws ConfigException {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return offload ? UdpKernelMode.GPE : UdpKernelMode.OFF;
        }
        UdpKernelMode mode = UdpKernelMode.parse(v).orElseThrow(() -> new ConfigException(name,
                name + ": expected off, encap, gpe or full (0/1 for off/full), got \"" + v + "\""));
        if (mode.needsOffload() && !offload) {
            throw new ConfigException(name, name + "=" + v.strip() + " needs JFLANNEL_UDP_OFFLOAD on (whole super-packets from peers)");
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

    private static int port(Map<String, String> env, String name, int dflt) throws ConfigException {
        return bounded(env, name, 1, 0xffff, dflt, "a UDP port 1..65535");
    }

    private static int queues(Map<String, String> env, String name) throws ConfigException {
        return bounded(env, name, 1, MAX_QUEUES, defaultQueues(), "1.." + MAX_QUEUES);
    }

    /** {@code name}'s value, an integer in {@code min..max}; {@code dflt} where unset or blank; else refused as not {@code expected}. */
    private static int bounded(Map<String, String> env, String name, int min, int max, int dflt, String expected)
            throws ConfigException {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return dflt;
        }
        try {
            int n = Integer.parseInt(v.strip());
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new ConfigException(name, name + ": expected " + expected + ", got \"" + v + "\"");
    }

    @Override
    public String toString() {
        return "offload=" + offload + " gro=" + gro + " coalesce=" + coalesce + " queues=" + queues
                + (txHandoff ? " txHandoff=true" : "") + (verifyChecksums ? " verifyChecksums=true" : "")
                + " kernel=" + kernel + (gpePort != GpePath.DEFAULT_PORT ? " gpePort=" + gpePort : "");
    }
}
