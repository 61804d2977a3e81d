package org.jflannel.backend.udp;

import java.util.List;
import java.util.function.Consumer;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.NetConf;
import org.jflannel.core.SubnetManager;
import org.jflannel.core.Subscription;

/** The one allowed fake: an in-memory lease source that hands out a fixed subnet and remembers what was published. */
final class FakeSubnets implements SubnetManager {
    private final NetConf conf;
    private final Ip4Net subnet;
    volatile LeaseAttrs published;

    FakeSubnets(NetConf conf, Ip4Net subnet) {
        this.conf = conf;
        this.subnet = subnet;
    }

    @Override
    public String name() {
        return "fake";
    }

    @Override
    public NetConf networkConfig() {
        return conf;
    }

    @Override
    public Lease acquireLease(LeaseAttrs attrs) {
        published = attrs;
        return new Lease(subnet, null, attrs, null);
    }

    @Override
    public Subscription watchLeases(Consumer<List<LeaseEvent>> sink) {
        sink.accept(List.of());
        return () -> { };
    }

    @Override
    public void completeLease(Lease own) {
    }

    @Override
    public void close() {
    }
}
