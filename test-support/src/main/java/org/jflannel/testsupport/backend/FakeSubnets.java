package org.jflannel.testsupport.backend;

import java.util.List;
import java.util.function.Consumer;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.NetConf;
import org.jflannel.core.SubnetManager;
import org.jflannel.core.Subscription;

/**
 * The one allowed fake, for the backends' own tests: an in-memory lease source that hands out a
 * fixed subnet (and IPv6 subnet, or null) and remembers the attributes the backend published.
 */
public final class FakeSubnets implements SubnetManager {
    private final NetConf conf;
    private final Ip4Net subnet;
    private final Ip6Net subnet6;
    private volatile LeaseAttrs published;

    public FakeSubnets(NetConf conf, Ip4Net subnet, Ip6Net subnet6) {
        this.conf = conf;
        this.subnet = subnet;
        this.subnet6 = subnet6;
    }

    /** What the backend passed to {@link #acquireLease}; null before. */
    public LeaseAttrs published() {
        return published;
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
        return new Lease(subnet, subnet6, attrs, null);
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
