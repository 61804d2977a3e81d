package org.jflannel.subnet.kube;

import org.jflannel.core.ConfigException;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.Lease;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NodeLeasesTest {

    private static final KubeAnnotations K = KubeFixture.KEYS;
    private static final String BD = "{\"VNI\":1,\"VtepMAC\":\"12:c6:65:89:b4:e3\"}";
    private static final String BD6 = "{\"VNI\":1,\"VtepMAC\":\"6a:0b:3e:41:8c:2d\"}";
    private final NodeLeases v4 = new NodeLeases(K, true, false);
    private final NodeLeases dual = new NodeLeases(K, true, true);

    private static Map<String, String> dualAnnotations() {
        Map<String, String> a = new HashMap<>();
        a.put(K.subnetKubeManaged(), "true");
        a.put(K.backendType(), "vxlan");
        a.put(K.backendData(), BD);
        a.put(K.backendV6Data(), BD6);
        a.put(K.publicIp(), "192.168.56.11");
        a.put(K.publicIpv6(), "fd00:56::11");
        return a;
    }

    private static NodeView node(List<String> podCidrs, Map<String, String> annotations) {
        return new NodeView("worker-1", podCidrs.isEmpty() ? "" : podCidrs.get(0), podCidrs, annotations);
    }

    private static NodeView with(String key, String value) {
        Map<String, String> a = dualAnnotations();
        if (value == null) {
            a.remove(key);
        } else {
            a.put(key, value);
        }
        return node(List.of("10.42.1.0/24", "2001:cafe:42:1::/64"), a);
    }

    @Test
    void ipv4LeaseFromPodCidrAndAnnotations() throws ConfigException {
        Lease l = v4.toLease(node(List.of("10.42.1.0/24"), dualAnnotations()));

        assertThat(l.subnet()).isEqualTo(Ip4Net.parse("10.42.1.0/24"));
        assertThat(l.ipv6Subnet()).isNull();
        assertThat(l.attrs().publicIp().getHostAddress()).isEqualTo("192.168.56.11");
        assertThat(l.attrs().publicIpv6()).isNull();
        assertThat(l.attrs().backendType()).isEqualTo("vxlan");
        assertThat(l.attrs().backendData()).isEqualTo(BD);
        assertThat(l.attrs().backendV6Data()).isNull();
    }

    @Test
    void dualStackLeaseTakesEachFamilyFromPodCidrs() throws ConfigException {
        Lease l = dual.toLease(node(List.of("2001:cafe:42:1::/64", "10.42.1.0/24"), dualAnnotations()));

        assertThat(l.subnet()).isEqualTo(Ip4Net.parse("10.42.1.0/24"));
        assertThat(l.ipv6Subnet()).isEqualTo(Ip6Net.parse("2001:cafe:42:1::/64"));
        assertThat(l.attrs().backendV6Data()).isEqualTo(BD6);
        assertThat(l.attrs().publicIpv6().getHostAddress()).isEqualTo("fd00:56:0:0:0:0:0:11");
    }

    @Test
    void podCidrIsUsedWhenPodCidrsIsEmpty() throws ConfigException {
        Lease l = v4.toLease(new NodeView("old-node", "10.42.7.0/24", List.of(), dualAnnotations()));

        assertThat(l.subnet()).isEqualTo(Ip4Net.parse("10.42.7.0/24"));
    }

    @Test
    void emptyBackendDataIsAbsent() throws ConfigException {
        assertThat(v4.toLease(with(K.backendData(), "")).attrs().backendData()).isNull();
    }

    @ParameterizedTest(name = "[{index}] {0}={1}")
    @CsvSource(delimiter = '|', nullValues = "NULL", value = {
            "flannel.alpha.coreos.com/public-ip      | NULL      | flannel.alpha.coreos.com/public-ip    | annotation flannel.alpha.coreos.com/public-ip is missing",
            "flannel.alpha.coreos.com/public-ip      | 10.0.0    | flannel.alpha.coreos.com/public-ip    | annotation flannel.alpha.coreos.com/public-ip: not an IPv4 address: \"10.0.0\"",
            "flannel.alpha.coreos.com/public-ip      | fd00::1   | flannel.alpha.coreos.com/public-ip    | annotation flannel.alpha.coreos.com/public-ip: not an IPv4 address: \"fd00::1\"",
            "flannel.alpha.coreos.com/public-ipv6    | NULL      | flannel.alpha.coreos.com/public-ipv6  | annotation flannel.alpha.coreos.com/public-ipv6 is missing",
            "flannel.alpha.coreos.com/public-ipv6    | 10.0.0.1  | flannel.alpha.coreos.com/public-ipv6  | annotation flannel.alpha.coreos.com/public-ipv6: not an IPv6 address: \"10.0.0.1\"",
            "flannel.alpha.coreos.com/backend-data   | {\"VNI\":1, | flannel.alpha.coreos.com/backend-data | annotation flannel.alpha.coreos.com/backend-data: invalid JSON",
            "flannel.alpha.coreos.com/backend-v6-data| [1,       | flannel.alpha.coreos.com/backend-v6-data | annotation flannel.alpha.coreos.com/backend-v6-data: invalid JSON",
    })
    void badAnnotationIsAnErrorNamingIt(String key, String value, String field, String message) {
        assertThatThrownBy(() -> dual.toLease(with(key, value)))
                .isInstanceOfSatisfying(ConfigException.class, e -> {
                    assertThat(e.field()).isEqualTo(field);
                    assertThat(e.getMessage()).startsWith(message);
                });
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', value = {
            "10.42.1.0/24,2001:cafe:42:1::/64,10.43.1.0/24 | spec.podCIDRs | node \"worker-1\" pod cidrs should be IPv4/IPv6 only or dualstack",
            "2001:cafe:42:1::/64                           | spec.podCIDRs | missing IPv4 address on n.Spec.PodCIDRs",
            "10.42.1.0/24                                  | spec.podCIDRs | missing IPv6 address on n.Spec.PodCIDRs",
            "10.42.1.0/33,2001:cafe:42:1::/64              | spec.podCIDRs | spec.podCIDRs: invalid CIDR address: 10.42.1.0/33",
            "banana,2001:cafe:42:1::/64                    | spec.podCIDRs | spec.podCIDRs: invalid CIDR address: banana",
    })
    void badPodCidrsAreAnErrorNamingTheField(String cidrs, String field, String message) {
        NodeView n = node(List.of(cidrs.split(",")), dualAnnotations());

        assertThatThrownBy(() -> dual.toLease(n)).isInstanceOfSatisfying(ConfigException.class, e -> {
            assertThat(e.field()).isEqualTo(field);
            assertThat(e.getMessage()).isEqualTo(message);
        });
    }

    @Test
    void noPodCidrAtAllIsMissingIpv4() {
        assertThatThrownBy(() -> v4.toLease(node(List.of(), dualAnnotations())))
                .hasMessage("missing IPv4 address on n.Spec.PodCIDRs");
    }

    @Test
    void onlyNodesAnnotatedTrueAreManaged() {
        assertThat(v4.managed(with(K.subnetKubeManaged(), "true"))).isTrue();
        assertThat(v4.managed(with(K.subnetKubeManaged(), "false"))).isFalse();
        assertThat(v4.managed(with(K.subnetKubeManaged(), null))).isFalse();
    }

    @ParameterizedTest(name = "[{index}] {0} -> v4 only {2}, dual {3}")
    @CsvSource(delimiter = '|', nullValues = "NULL", value = {
            "flannel.alpha.coreos.com/backend-data    | {\"VNI\":1,\"VtepMAC\":\"12:c6:65:89:b4:e4\"} | true  | true",
            "flannel.alpha.coreos.com/public-ip       | 192.168.56.12                                | true  | true",
            "flannel.alpha.coreos.com/backend-type    | host-gw                                      | true  | true",
            // Ours: a change of the IPv6 family alone is an event in dual stack (upstream ignores it)
            "flannel.alpha.coreos.com/backend-v6-data | {\"VNI\":1,\"VtepMAC\":\"6a:0b:3e:41:8c:2e\"} | false | true",
            "flannel.alpha.coreos.com/public-ipv6     | fd00:56::12                                  | false | true",
            "flannel.alpha.coreos.com/public-ip       | 192.168.56.11                                | false | false",
    })
    void updateIsAnEventWhenEitherFamilysAnnotationsChange(String key, String value, boolean v4Event, boolean dualEvent) {
        NodeView before = with(K.publicIp(), "192.168.56.11");
        NodeView after = with(key, value);

        assertThat(v4.changed(before, after)).isEqualTo(v4Event);
        assertThat(dual.changed(before, after)).isEqualTo(dualEvent);
    }

    @Test
    void podCidrChangeAloneIsNoEvent() {
        NodeView before = node(List.of("10.42.1.0/24", "2001:cafe:42:1::/64"), dualAnnotations());
        NodeView after = node(List.of("10.42.9.0/24", "2001:cafe:42:9::/64"), dualAnnotations());

        assertThat(dual.changed(before, after)).isFalse();
    }

    @Test
    void becomingManagedIsAnEvent() {
        assertThat(v4.changed(with(K.subnetKubeManaged(), null), with(K.subnetKubeManaged(), "true"))).isTrue();
    }
}
