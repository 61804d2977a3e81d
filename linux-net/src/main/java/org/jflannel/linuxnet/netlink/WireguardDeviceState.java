package org.jflannel.linuxnet.netlink;

import java.util.List;

/**
 * A kernel WireGuard device as {@code WG_CMD_GET_DEVICE} reports it: name, index, listen port, public key
 * (base64; null before a private key is set) and its peers in the kernel's order. The private key the kernel
 * also sends is never decoded.
 */
public record WireguardDeviceState(String ifname, int ifindex, int listenPort, String publicKey, List<WireguardPeerState> peers) {
    public WireguardDeviceState {
        peers = List.copyOf(peers);
    }
}
