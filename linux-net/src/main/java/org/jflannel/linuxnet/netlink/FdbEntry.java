package org.jflannel.linuxnet.netlink;

import java.net.InetAddress;
import java.util.Objects;
import org.jflannel.core.MacAddress;

/** A VXLAN forwarding entry (AF_BRIDGE + NTF_SELF + NUD_PERMANENT): frames to {@code mac} go to VTEP {@code dst}. */
public record FdbEntry(int linkIndex, MacAddress mac, InetAddress dst) {
    public FdbEntry {
        if (linkIndex <= 0) {
            throw new IllegalArgumentException("fdb: link index must be positive, got " + linkIndex);
        }
        Objects.requireNonNull(mac, "fdb mac");
        Objects.requireNonNull(dst, "fdb dst");
    }
}
