package org.jflannel.subnet.kube;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jflannel.core.ConfigException;
import org.jflannel.core.Lease;

/**
 * What any client allowed to patch a Node can write: its annotations and {@code spec.podCIDR(s)}, as the
 * kube subnet manager turns them into a lease. The input is NUL-separated text: podCIDR, podCIDRs
 * (comma-separated), then the values of kube-subnet-manager, backend-type, backend-data,
 * backend-v6-data, public-ip, public-ipv6 (an absent part is an absent annotation). Property: a lease
 * or a {@link ConfigException} naming the field, for IPv4-only and dual stack, never another exception.
 */
class NodeLeaseFuzzTest {
    private static final KubeAnnotations K = KubeFixture.KEYS;

    @FuzzTest(maxDuration = "5m")
    void nodeToLease(byte[] input) {
        String[] p = new String(input, StandardCharsets.UTF_8).split("\0", 8);
        List<String> podCidrs = p.length > 1 && !p[1].isEmpty() ? Arrays.asList(p[1].split(",", 8)) : List.of();
        String[] keys = {K.subnetKubeManaged(), K.backendType(), K.backendData(), K.backendV6Data(), K.publicIp(), K.publicIpv6()};
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i < keys.length && i + 2 < p.length; i++) {
            a.put(keys[i], p[i + 2]);
        }
        NodeView node = new NodeView("n", p[0], podCidrs, a);
        NodeView before = new NodeView("n", "", List.of(), Map.of());
        for (boolean ipv6 : new boolean[] {false, true}) {
            NodeLeases leases = new NodeLeases(K, true, ipv6);
            try {
                Lease l = leases.toLease(node);
                if (l.subnet() == null || l.attrs().publicIp() == null) {
                    throw new AssertionError("a lease without subnet or public IP: " + l);
                }
            } catch (ConfigException e) {
                if (e.field() == null || e.field().isBlank()) {
                    throw new AssertionError("a rejection that names no field", e);
                }
            }
            leases.managed(node);
            leases.changed(before, node);
        }
    }
}
