package org.jflannel.subnet.etcd;

import java.net.Inet4Address;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.SubnetManager;
import org.jflannel.subnet.SubnetManagerContract;
import org.jflannel.testsupport.etcd.EtcdExtension;
import org.jflannel.testsupport.etcd.EtcdProcess;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

/** The {@link SubnetManagerContract} against a real etcd; peers are written as upstream flanneld writes them. */
@Tag("etcd")
@ExtendWith(EtcdExtension.class)
class EtcdSubnetManagerContractIT extends SubnetManagerContract {
    // own leases come from 10.42.1-99.x; peers live above, where our allocator never goes
    static final String CONFIG = "{\"Network\":\"10.42.0.0/16\",\"SubnetMax\":\"10.42.99.0\",\"Backend\":{\"Type\":\"vxlan\"}}";

    private final EtcdProcess etcd;

    EtcdSubnetManagerContractIT(EtcdProcess etcd) {
        this.etcd = etcd;
    }

    @Override
    protected StoreFixture openFixture() throws Exception {
        EtcdAdmin admin = new EtcdAdmin(etcd.endpoint(), "/jf-" + UUID.randomUUID());
        admin.putConfig(CONFIG);
        return new Fixture(admin);
    }

    private final class Fixture implements StoreFixture {
        private final EtcdAdmin admin;
        private final Map<String, Ip4Net> peerSubnets = new HashMap<>();

        Fixture(EtcdAdmin admin) {
            this.admin = admin;
        }

        @Override
        public SubnetManager newManager(String nodeName, Inet4Address publicIp) throws Exception {
            return new EtcdSubnetManager(admin.options(etcd.endpoint()), null, null, EtcdAdmin.TIMINGS, () -> { });
        }

        @Override
        public Lease putPeer(String nodeName, Inet4Address publicIp, String backendData) throws Exception {
            Ip4Net subnet = peerSubnets.computeIfAbsent(nodeName,
                    n -> Ip4Net.parse("10.42." + (200 + peerSubnets.size()) + ".0/24"));
            admin.putLeased(key(subnet), EtcdAdmin.upstreamValue(publicIp.getHostAddress(), backendData));
            return new Lease(subnet, null, new LeaseAttrs(publicIp, null, "vxlan", backendData, null), null);
        }

        @Override
        public void removePeer(String nodeName) throws Exception {
            admin.delete(key(peerSubnets.get(nodeName)));
        }

        @Override
        public Malformed putMalformedPeer(String nodeName) throws Exception {
            String key = admin.key("10.42.250.0-24");
            admin.putLeased(key, "{\"PublicIP\":\"" + MALFORMED_PEER_IP.getHostAddress()
                    + "\",\"PublicIPv6\":null,\"BackendType\":7,\"BackendData\":{\"VNI\":1}}");
            return new Malformed(key, "BackendType");
        }

        private String key(Ip4Net subnet) {
            return admin.key(LeaseKeyCodec.format(subnet, null));
        }

        @Override
        public void close() {
            admin.close();
        }
    }
}
