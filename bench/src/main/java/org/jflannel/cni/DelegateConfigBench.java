package org.jflannel.cni;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.jflannel.core.CniSubnetEnv;
import org.jflannel.core.ConfigException;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The CNI plugin's ADD work between reading its input and starting the delegate, for REFERENCE
 * §11.9 example 2 (kube-flannel): decode stdin, parse subnet.env, build the delegate config and
 * write it as Go would. The classes are package-private, so this benchmark sits in their package.
 *
 * <p>Caveat: the plugin runs once per pod in a fresh JVM under {@code -Xint}; these numbers are
 * JIT-compiled steady state and say how much work the code does, not what one pod ADD costs
 * (docs/benchmarks.md "CNI plugin latency" has that).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class DelegateConfigBench {
    static final byte[] STDIN = ("{\"cniVersion\":\"0.3.1\",\"delegate\":{\"hairpinMode\":true,\"isDefaultGateway\":true},"
            + "\"name\":\"cbr0\",\"type\":\"flannel\"}").getBytes(StandardCharsets.UTF_8);
    static final String SUBNET_ENV = "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\n"
            + "FLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n";
    /** The delegate bytes REFERENCE §11.9 gives for this input. */
    static final byte[] EXPECTED = ("{\"cniVersion\":\"0.3.1\",\"hairpinMode\":true,\"ipMasq\":false,\"ipam\":{\"ranges\":"
            + "[[{\"subnet\":\"10.244.1.0/24\"}]],\"routes\":[{\"dst\":\"10.244.0.0/16\"}],\"type\":\"host-local\"},"
            + "\"isDefaultGateway\":true,\"isGateway\":true,\"mtu\":1450,\"name\":\"cbr0\",\"type\":\"bridge\"}")
            .getBytes(StandardCharsets.UTF_8);

    private FlannelNetConf conf;
    private CniSubnetEnv env;

    @Setup
    public void setUp() throws Exception {
        conf = FlannelNetConf.decode(STDIN);
        env = CniSubnetEnv.parse("/run/flannel/subnet.env", SUBNET_ENV);
        check(buildAndWrite());
        check(decodeBuildAndWrite());
    }

    /** The delegate config from already decoded inputs, serialised: DelegateConfig.build + GoJsonWriter.compact. */
    @Benchmark
    public byte[] buildAndWrite() throws CniException {
        return GoJsonWriter.compact(DelegateConfig.build(conf, env));
    }

    /** Stdin and subnet.env text to delegate bytes: the whole pure part of an ADD. */
    @Benchmark
    public byte[] decodeBuildAndWrite() throws CniException, ConfigException {
        FlannelNetConf c = FlannelNetConf.decode(STDIN);
        CniSubnetEnv e = CniSubnetEnv.parse("/run/flannel/subnet.env", SUBNET_ENV);
        return GoJsonWriter.compact(DelegateConfig.build(c, e));
    }

    private static void check(byte[] out) {
        if (!Arrays.equals(out, EXPECTED)) {
            throw new IllegalStateException("delegate bytes differ from REFERENCE §11.9: " + new String(out, StandardCharsets.UTF_8));
        }
    }
}
