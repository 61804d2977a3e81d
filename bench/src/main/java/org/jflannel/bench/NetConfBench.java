package org.jflannel.bench;

import java.util.concurrent.TimeUnit;
import org.jflannel.core.ConfigException;
import org.jflannel.core.NetConf;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/** {@code NetConf.parse} of kube-flannel's net-conf.json (manifests/base/configmap.yml, REFERENCE §10), in kube mode. */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class NetConfBench {
    /** Byte for byte the ConfigMap's net-conf.json, indentation and trailing newline included. */
    static final String KUBE_FLANNEL_NET_CONF = """
            {
              "Network": "10.244.0.0/16",
              "EnableNFTables": false,
              "Backend": {
                "Type": "vxlan"
              }
            }
            """;

    @Benchmark
    public NetConf parseKubeFlannel() throws ConfigException {
        return NetConf.parse(KUBE_FLANNEL_NET_CONF, NetConf.Mode.KUBE);
    }
}
