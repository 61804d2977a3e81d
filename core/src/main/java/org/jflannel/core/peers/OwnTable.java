package org.jflannel.core.peers;

import java.util.Collection;

/**
 * A kernel side whose entries no one but us writes: a table in our own process (udp's peers, the userspace
 * WireGuard device's) or the operator's commands, whose effects are the operator's. Nothing can drift,
 * so there is no device to check and nothing to read back: a reconcile pass repairs nothing.
 */
public interface OwnTable<E> extends PeerKernel<E> {

    @Override
    default Devices devices() {
        return Devices.READY;
    }

    @Override
    default ReadBack<E> readBack(Collection<E> desired, boolean withStrays) {
        return ReadBack.nothing();
    }
}
