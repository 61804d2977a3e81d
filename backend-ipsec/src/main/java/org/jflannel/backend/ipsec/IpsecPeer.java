package org.jflannel.backend.ipsec;

import java.util.List;
import java.util.Objects;
import org.jflannel.backend.ipsec.vici.ViciMessage;
import org.jflannel.linuxnet.netlink.XfrmPolicy;

/**
 * What one peer lease asks of charon and the kernel, as upstream's handleSubnetEvents: the peer's
 * public IP (the owner of the PSK loaded for it), one IKE connection {@code name} with its settings,
 * and three XFRM policies (out, in, fwd) between our subnet and the peer's.
 */
public record IpsecPeer(String peerPublicIp, String connName, ViciMessage conn, List<XfrmPolicy> policies) {
    public IpsecPeer {
        Objects.requireNonNull(peerPublicIp, "peerPublicIp");
        Objects.requireNonNull(connName, "connName");
        Objects.requireNonNull(conn, "conn");
        policies = List.copyOf(policies);
    }

    @Override
    public String toString() {
        return "IpsecPeer[" + connName + "]";
    }
}
