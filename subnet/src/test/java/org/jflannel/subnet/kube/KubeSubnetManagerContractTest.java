package org.jflannel.subnet.kube;

import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.SubnetManager;
import org.jflannel.subnet.SubnetManagerContract;

import java.net.Inet4Address;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** The SubnetManager contract on fabric8's mock API server (with our Node patch extension). */
class KubeSubnetManagerContractTest extends SubnetManagerContract {

    @Override
    protected StoreFixture openFixture() throws Exception {
        Path dir = Files.createTempDirectory("jflannel-kube");
        KubeFixture kube = new KubeFixture(dir, KubeFixture.NET_CONF);
        kube.putNode(OWN_NODE, List.of(kube.v4Cidr(OWN_NODE)), Map.of());
        return new StoreFixture() {
            @Override
            public SubnetManager newManager(String nodeName, Inet4Address publicIp) throws Exception {
                if (kube.admin.nodes().withName(nodeName).get() == null) {
                    kube.putNode(nodeName, List.of(kube.v4Cidr(nodeName)), Map.of());
                }
                return kube.manager(nodeName);
            }

            @Override
            public Lease putPeer(String nodeName, Inet4Address publicIp, String backendData) {
                String cidr = kube.v4Cidr(nodeName);
                kube.putNode(nodeName, List.of(cidr), KubeFixture.upstreamAnnotations(publicIp.getHostAddress(), backendData));
                return new Lease(Ip4Net.parse(cidr), null, new LeaseAttrs(publicIp, null, "vxlan", backendData, null), null);
            }

            @Override
            public void removePeer(String nodeName) {
                kube.admin.nodes().withName(nodeName).delete();
            }

            @Override
            public Malformed putMalformedPeer(String nodeName) {
                kube.putNode(nodeName, List.of(kube.v4Cidr(nodeName)),
                        KubeFixture.upstreamAnnotations(MALFORMED_PEER_IP.getHostAddress(), "{\"VNI\":1,\"VtepMAC\":"));
                return new Malformed(nodeName, KubeFixture.KEYS.backendData());
            }

            @Override
            public void close() throws Exception {
                kube.close();
                try (var files = Files.walk(dir)) {
                    files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        };
    }
}
