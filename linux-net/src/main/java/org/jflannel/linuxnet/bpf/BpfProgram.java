package org.jflannel.linuxnet.bpf;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.nio.charset.StandardCharsets;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.internal.BpfSys;
import org.jflannel.linuxnet.internal.Fd;

/**
 * A verified, loaded eBPF program of type {@code BPF_PROG_TYPE_SCHED_CLS} (a tc/tcx classifier),
 * from instructions {@link BpfAsm} built. A program the verifier refuses fails with the tail of the
 * verifier's log in the exception. Closing drops our reference; an attached {@link BpfLink} keeps
 * its own.
 */
public final class BpfProgram implements AutoCloseable {
    private static final int PROG_TYPE_SCHED_CLS = 3;
    private static final int LOG_SIZE = 1 << 18;
    /** Lines of the verifier log kept in an error message. */
    private static final int LOG_TAIL_LINES = 6;

    private final Fd fd;
    private final String name;

    private BpfProgram(int fd, String name) {
        this.fd = new Fd(fd, "bpf program " + name);
        this.name = name;
    }

    /**
     * Loads a tc classifier, declared "GPL" to the kernel as tc programs customarily are (the
     * kernel offers some helpers only to GPL programs).
     *
     * @param name up to 15 characters of {@code [A-Za-z0-9_]}
     */
    public static BpfProgram loadClassifier(String name, byte[] insns) throws NetlinkException {
        if (name.length() > 15 || !name.matches("[A-Za-z0-9_]*")) {
            throw new IllegalArgumentException("bpf program name: up to 15 of [A-Za-z0-9_], got " + name);
        }
        if (insns.length == 0 || insns.length % BpfAsm.INSN_SIZE != 0) {
            throw new IllegalArgumentException("bpf program " + name + ": instructions must be a non-empty multiple of 8 bytes");
        }
        Memory code = BpfSys.copy(insns);
        Memory license = BpfSys.copy("GPL\0".getBytes(StandardCharsets.US_ASCII));
        Memory log = new Memory(LOG_SIZE);
        log.clear();
        Memory attr = BpfSys.attr();
        attr.setInt(0, PROG_TYPE_SCHED_CLS);
        attr.setInt(4, insns.length / BpfAsm.INSN_SIZE);
        attr.setLong(8, Pointer.nativeValue(code));
        attr.setLong(16, Pointer.nativeValue(license));
        attr.setInt(24, 1); // log_level: the verifier explains a refusal
        attr.setInt(28, LOG_SIZE);
        attr.setLong(32, Pointer.nativeValue(log));
        byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        attr.write(48, n, 0, n.length);
        try {
            return new BpfProgram(BpfSys.call(BpfSys.PROG_LOAD, attr, "BPF_PROG_LOAD", name, null), name);
        } catch (NetlinkException e) {
            throw new NetlinkException("BPF_PROG_LOAD", name, e.errno(), "verifier: " + tail(log.getString(0)));
        }
    }

    /** What one {@link #testRun} returned: the program's verdict and the packet as it left it. */
    public record TestRun(int verdict, byte[] packet) {
    }

    /**
     * Runs the program once on {@code frame} (an Ethernet frame; bpf(2) BPF_PROG_TEST_RUN): helpers
     * run for real on a scratch packet, except that redirects only return their verdict. For tests.
     */
    public TestRun testRun(byte[] frame) throws NetlinkException {
        Memory in = BpfSys.copy(frame);
        int room = frame.length + 256;
        Memory out = new Memory(room);
        out.clear();
        Memory attr = BpfSys.attr();
        attr.setInt(0, fd.get());
        attr.setInt(8, frame.length);
        attr.setInt(12, room);
        attr.setLong(16, Pointer.nativeValue(in));
        attr.setLong(24, Pointer.nativeValue(out));
        attr.setInt(32, 1);
        BpfSys.call(BpfSys.PROG_TEST_RUN, attr, "BPF_PROG_TEST_RUN", name, null);
        return new TestRun(attr.getInt(4), out.getByteArray(0, attr.getInt(12)));
    }

    private static String tail(String log) {
        String[] lines = log.strip().split("\n");
        int from = Math.max(0, lines.length - LOG_TAIL_LINES);
        return String.join(" | ", java.util.Arrays.copyOfRange(lines, from, lines.length));
    }

    public int fd() {
        return fd.get();
    }

    public String name() {
        return name;
    }

    @Override
    public void close() {
        fd.close();
    }

    @Override
    public String toString() {
        return "bpf program " + name;
    }
}
