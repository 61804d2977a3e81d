package org.jflannel.core;

import java.io.IOException;

/** A data plane (upstream {@code backend.Backend}): vxlan, udp. */
public interface Backend {

    /**
     * Creates or adopts the device(s), acquires the lease through {@code subnets} with this
     * backend's attributes, and addresses the device (REFERENCE §6.2 steps 1–6).
     */
    Network register(NetConf conf, SubnetManager subnets) throws IOException, InterruptedException, ConfigException;
}
