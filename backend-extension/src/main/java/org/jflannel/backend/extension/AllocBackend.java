package org.jflannel.backend.extension;

import java.io.IOException;
import java.util.List;
import java.util.Objects;
import org.jflannel.core.Backend;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.ConfigException;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.NetConf;
import org.jflannel.core.Network;
import org.jflannel.core.SubnetManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * upstream's {@code alloc} backend (REFERENCE §15): a lease with only the public IP (no backend
 * type, no backend data), so that subnet.env is written for whatever else routes the pods; no
 * device, no routes, and peers' leases are not acted on. FLANNEL_MTU is the external interface's.
 */
public final class AllocBackend implements Backend {
    private static final Logger LOG = LoggerFactory.getLogger(AllocBackend.class);
    private final ExternalInterface ext;

    public AllocBackend(ExternalInterface ext) {
        this.ext = Objects.requireNonNull(ext, "ext");
    }

    @Override
    public Network register(NetConf conf, SubnetManager subnets) throws IOException, InterruptedException, ConfigException {
        if (!(conf.backend() instanceof BackendConfig.Alloc)) {
            throw new ConfigException("Backend.Type", "alloc backend cannot run Backend.Type " + conf.backend().type());
        }
        Lease lease = subnets.acquireLease(new LeaseAttrs(ext.publicIp(), null, "", null, null));
        LOG.info("alloc network registered lease={} mtu={}", lease.key(), ext.mtu());
        return new Quiet(lease, ext.mtu());
    }

    /** A network that holds a lease and does nothing with peers. */
    private record Quiet(Lease lease, int mtu) implements Network {
        @Override
        public void apply(List<LeaseEvent> batch) {
            // alloc programs nothing
        }

        @Override
        public void reconcile() {
            // nothing to reconcile
        }

        @Override
        public void close() {
            // nothing held
        }
    }
}
