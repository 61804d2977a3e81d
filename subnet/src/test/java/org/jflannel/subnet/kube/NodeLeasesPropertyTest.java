package org.jflannel.subnet.kube;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.jflannel.core.ConfigException;
import org.jflannel.core.Lease;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Whatever a node's annotations and pod CIDRs hold, the parser gives a lease or a ConfigException, nothing else. */
class NodeLeasesPropertyTest {

    private static final KubeAnnotations K = KubeFixture.KEYS;

    @Property(tries = 2000)
    void anyAnnotationValuesGiveALeaseOrASkip(@ForAll("nodes") NodeView node, @ForAll boolean ipv6) {
        NodeLeases leases = new NodeLeases(K, true, ipv6);
        try {
            Lease l = leases.toLease(node);
            assertThat(l.subnet()).isNotNull();
            assertThat(l.attrs().publicIp()).isNotNull();
        } catch (ConfigException e) {
            assertThat(e.getMessage()).isNotBlank();
            assertThat(e.field()).isNotBlank();
        }
        leases.managed(node);
        leases.changed(node, node);
    }

    @Provide
    Arbitrary<NodeView> nodes() {
        Arbitrary<String> value = Arbitraries.oneOf(
                Arbitraries.strings().ofMaxLength(40),
                Arbitraries.strings().withChars("0123456789.:/abcdef{}\"[],VNItrue").ofMaxLength(30),
                Arbitraries.of("192.0.2.1", "fd00::1", "::ffff:10.0.0.1", "1.2.3.4.5", "256.1.1.1", "01.2.3.4",
                        "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:01\"}", "null", "{", "true", "", " "));
        Arbitrary<String> cidr = Arbitraries.oneOf(value,
                Arbitraries.of("10.244.1.0/24", "10.244.1.7/24", "2001:db8::/64", "10.0.0.0/33", "/24", "10.0.0.0/",
                        "2001:db8::/129", "::/0", "0.0.0.0/0", "10.0.0.0/-1", "1.2.3.4/024"));
        Arbitrary<Map<String, String>> annotations = Combinators.combine(
                value.injectNull(0.2), value.injectNull(0.2), value.injectNull(0.2), value.injectNull(0.2),
                value.injectNull(0.2), value.injectNull(0.2)).as((a, b, c, d, e, f) -> {
                    Map<String, String> m = new HashMap<>();
                    put(m, K.subnetKubeManaged(), a);
                    put(m, K.backendType(), b);
                    put(m, K.backendData(), c);
                    put(m, K.backendV6Data(), d);
                    put(m, K.publicIp(), e);
                    put(m, K.publicIpv6(), f);
                    return m;
                });
        return Combinators.combine(cidr, cidr.list().ofMaxSize(4), annotations)
                .as((podCidr, podCidrs, a) -> new NodeView("n", podCidr, List.copyOf(podCidrs), a));
    }

    private static void put(Map<String, String> m, String k, String v) {
        if (v != null) {
            m.put(k, v);
        }
    }
}
