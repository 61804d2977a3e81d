package org.jflannel.subnet.etcd;

import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.jflannel.core.ConfigException;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Decoding an etcd lease as upstream flanneld writes it (REFERENCE §5.2): the value alone
 * ({@code LeaseValueCodec.parse}) and key + value into a {@code Lease} ({@code EtcdLeases.decode},
 * what the watch does per event). Package-private classes, so this benchmark sits in their package.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class LeaseValueBench {
    static final String KEY = "/coreos.com/network/subnets/10.5.34.0-24";
    /** Byte for byte what upstream's json.Marshal(LeaseAttrs) writes for a vxlan node. */
    static final String UPSTREAM_VALUE = "{\"PublicIP\":\"192.168.64.3\",\"PublicIPv6\":null,\"BackendType\":\"vxlan\","
            + "\"BackendData\":{\"VNI\":1,\"VtepMAC\":\"c6:d2:32:6e:8b:10\"}}";

    private Instant expiration;

    @Setup
    public void setUp() throws ConfigException {
        expiration = Instant.parse("2026-11-23T12:00:00Z");
        LeaseAttrs a = LeaseValueCodec.parse(KEY, UPSTREAM_VALUE);
        if (!"{\"VNI\":1,\"VtepMAC\":\"c6:d2:32:6e:8b:10\"}".equals(a.backendData()) || a.publicIp() == null) {
            throw new IllegalStateException("unexpected decode: " + a);
        }
    }

    @Benchmark
    public LeaseAttrs decodeValue() throws ConfigException {
        return LeaseValueCodec.parse(KEY, UPSTREAM_VALUE);
    }

    @Benchmark
    public Lease decodeKeyAndValue() throws ConfigException {
        return EtcdLeases.decode(KEY, UPSTREAM_VALUE, expiration);
    }
}
