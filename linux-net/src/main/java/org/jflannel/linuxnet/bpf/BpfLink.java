package org.jflannel.linuxnet.bpf;

import com.sun.jna.Memory;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.internal.BpfSys;
import org.jflannel.linuxnet.internal.Fd;

/**
 * A program attached to a device's tcx hook (Linux 6.6+, bpf(2) BPF_LINK_CREATE): it runs for every
 * packet the device receives (ingress) or transmits (egress) until the link is closed, which
 * detaches it, also when the process dies. Other programs on the same hook keep running: ours
 * return {@code TCX_NEXT} for what they leave alone.
 */
public final class BpfLink implements AutoCloseable {
    /** The hooks, with their {@code enum bpf_attach_type} numbers. */
    public enum Hook {
        TCX_INGRESS(46), TCX_EGRESS(47);

        final int attachType;

        Hook(int attachType) {
            this.attachType = attachType;
        }
    }

    private final Fd fd;
    private final String what;

    private BpfLink(int fd, String what) {
        this.fd = new Fd(fd, "bpf link " + what);
        this.what = what;
    }

    /** Attaches {@code program} to interface {@code ifindex} (of the calling thread's namespace). */
    public static BpfLink attach(BpfProgram program, int ifindex, Hook hook) throws NetlinkException {
        Memory attr = BpfSys.attr();
        attr.setInt(0, program.fd());
        attr.setInt(4, ifindex);
        attr.setInt(8, hook.attachType);
        String what = program.name() + " " + hook + " ifindex " + ifindex;
        return new BpfLink(BpfSys.call(BpfSys.LINK_CREATE, attr, "BPF_LINK_CREATE", what, null), what);
    }

    @Override
    public void close() {
        fd.close();
    }

    @Override
    public String toString() {
        return "bpf link " + what;
    }
}
