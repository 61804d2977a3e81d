package org.jflannel.testsupport.cluster;

import java.util.Objects;

/** A pod of the cluster: a network namespace attached through the CNI chain on node {@code node}. */
public record Pod(String name, int node, String namespace, String ip) {
    public Pod {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(ip, "ip");
    }
}
