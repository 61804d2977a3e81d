package org.jflannel.subnet.kube;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.jflannel.core.ConfigException;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Interop in both directions with upstream flannel's node annotations (REFERENCE §4.2, §6.6): a Node
 * annotated by upstream flanneld becomes the lease upstream would make of it, and what we write is
 * what upstream reads (its keys, its backend-data format, its VtepMAC recovery).
 */
class UpstreamNodeInteropTest {

    private static final KubeAnnotations K = KubeFixture.KEYS;

    private static Node upstreamNode() throws IOException {
        try (InputStream in = UpstreamNodeInteropTest.class.getResourceAsStream("/kube/upstream-node-dualstack.json")) {
            return Serialization.unmarshal(new String(in.readAllBytes(), StandardCharsets.UTF_8), Node.class);
        }
    }

    @Test
    void upstreamDualStackNodeBecomesTheSameLease() throws Exception {
        Lease l = new NodeLeases(K, true, true).toLease(NodeView.of(upstreamNode(), K));

        assertThat(l).isEqualTo(new Lease(Ip4Net.parse("10.42.1.0/24"), Ip6Net.parse("2001:cafe:42:1::/64"),
                new LeaseAttrs((Inet4Address) InetAddress.getByName("192.168.56.11"),
                        (Inet6Address) InetAddress.getByName("fd00:56::11"), "vxlan",
                        "{\"VNI\":1,\"VtepMAC\":\"12:c6:65:89:b4:e3\"}",
                        "{\"VNI\":1,\"VtepMAC\":\"6a:0b:3e:41:8c:2d\"}"), null));
    }

    @Test
    void upstreamNodeInAnIpv4ClusterIgnoresTheV6Family() throws Exception {
        Lease l = new NodeLeases(K, true, false).toLease(NodeView.of(upstreamNode(), K));

        assertThat(l.key()).isEqualTo("10.42.1.0-24");
        assertThat(l.attrs().backendV6Data()).isNull();
        assertThat(l.attrs().publicIpv6()).isNull();
    }

    @Test
    void viewKeepsOnlyTheLeaseAnnotationsOfTheNode() throws Exception {
        NodeView v = NodeView.of(upstreamNode(), K);

        assertThat(v.annotations()).containsOnlyKeys(K.leaseKeys());
        assertThat(v.podCidrs()).containsExactly("10.42.1.0/24", "2001:cafe:42:1::/64");
    }

    @Test
    void whatWeWriteUsesUpstreamsKeysAndFormats() throws Exception {
        LeaseAttrs attrs = new LeaseAttrs((Inet4Address) InetAddress.getByName("192.168.56.11"),
                (Inet6Address) InetAddress.getByName("fd00:56:0:0:0:0:0:11"), "vxlan",
                "{\"VNI\":1,\"VtepMAC\":\"12:c6:65:89:b4:e3\"}", "{\"VNI\":1,\"VtepMAC\":\"6a:0b:3e:41:8c:2d\"}");

        Map<String, String> written = OwnNodeAnnotations.desired(K, attrs, true, Map.of());

        assertThat(written).containsExactlyInAnyOrderEntriesOf(Map.of(
                "flannel.alpha.coreos.com/backend-type", "vxlan",
                "flannel.alpha.coreos.com/backend-data", "{\"VNI\":1,\"VtepMAC\":\"12:c6:65:89:b4:e3\"}",
                "flannel.alpha.coreos.com/public-ip", "192.168.56.11",
                "flannel.alpha.coreos.com/backend-v6-data", "{\"VNI\":1,\"VtepMAC\":\"6a:0b:3e:41:8c:2d\"}",
                "flannel.alpha.coreos.com/public-ipv6", "fd00:56::11",
                "flannel.alpha.coreos.com/kube-subnet-manager", "true"));
        // upstream's VtepMAC recovery (§4.2): strings.Trim(v, "\"}"), split on `:"`, exactly 2 parts
        assertThat(upstreamRecoveredMac(written.get("flannel.alpha.coreos.com/backend-data"))).isEqualTo("12:c6:65:89:b4:e3");
        assertThat(upstreamRecoveredMac(written.get("flannel.alpha.coreos.com/backend-v6-data"))).isEqualTo("6a:0b:3e:41:8c:2d");
        // and a node carrying it is read back, by upstream's rules, into the lease we published
        Lease back = new NodeLeases(K, true, true).toLease(new NodeView("us", "10.42.1.0/24",
                List.of("10.42.1.0/24", "2001:cafe:42:1::/64"), new HashMap<>(written)));
        assertThat(back.attrs()).isEqualTo(attrs);
    }

    @Test
    void overwriteAnnotationsArePublishedAsThePublicIp() throws Exception {
        LeaseAttrs attrs = new LeaseAttrs((Inet4Address) InetAddress.getByName("10.0.0.5"), null, "vxlan",
                "{\"VNI\":1,\"VtepMAC\":\"12:c6:65:89:b4:e3\"}", null);

        Map<String, String> written = OwnNodeAnnotations.desired(K, attrs, true,
                Map.of(K.publicIpOverwrite(), "203.0.113.7"));

        assertThat(written).containsEntry(K.publicIp(), "203.0.113.7").doesNotContainKey(K.backendV6Data());
    }

    @Test
    void vxlanWithoutV4DataWritesOnlyTheV6Family() throws Exception {
        LeaseAttrs attrs = new LeaseAttrs(null, (Inet6Address) InetAddress.getByName("fd00::5"), "vxlan",
                null, "{\"VNI\":1,\"VtepMAC\":\"6a:0b:3e:41:8c:2d\"}");

        Map<String, String> written = OwnNodeAnnotations.desired(K, attrs, false, Map.of());

        assertThat(written).containsOnlyKeys(K.backendType(), K.backendV6Data(), K.publicIpv6(), K.subnetKubeManaged());
    }

    @Test
    void nothingChangesWhenTheNodeAlreadyCarriesIt() throws Exception {
        LeaseAttrs attrs = new LeaseAttrs((Inet4Address) InetAddress.getByName("10.0.0.5"), null, "vxlan",
                "{\"VNI\":1,\"VtepMAC\":\"12:c6:65:89:b4:e3\"}", null);
        Map<String, String> current = new HashMap<>(OwnNodeAnnotations.desired(K, attrs, true, Map.of()));
        current.put("unrelated", "x");

        assertThat(OwnNodeAnnotations.changes(K, attrs, true, current)).isEmpty();
        current.put(K.publicIp(), "10.0.0.6");
        assertThat(OwnNodeAnnotations.changes(K, attrs, true, current)).containsExactly(Map.entry(K.publicIp(), "10.0.0.5"));
    }

    /** Upstream flannel's extraction of the stored MAC, transcribed. */
    private static String upstreamRecoveredMac(String value) {
        String trimmed = value.replaceAll("^[\"}]+|[\"}]+$", "");
        String[] parts = trimmed.split(":\"", -1);
        return parts.length == 2 ? parts[1] : null;
    }

    @Test
    void dualStackNodeWithV4OnlyClusterStillParsesUnderACustomPrefix() throws ConfigException {
        KubeAnnotations custom = new KubeAnnotations("example.com/cni-");
        Map<String, String> a = Map.of(custom.subnetKubeManaged(), "true", custom.backendType(), "vxlan",
                custom.publicIp(), "192.0.2.5", custom.backendData(), "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:05\"}");

        Lease l = new NodeLeases(custom, true, false).toLease(new NodeView("n", "10.1.2.0/24", List.of(), a));

        assertThat(l.key()).isEqualTo("10.1.2.0-24");
        assertThat(custom.backendData()).isEqualTo("example.com/cni-backend-data");
    }
}
