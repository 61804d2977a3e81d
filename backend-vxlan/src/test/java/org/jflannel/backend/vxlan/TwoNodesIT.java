package org.jflannel.backend.vxlan;

import static org.assertj.core.api.Assertions.assertThat;

import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The vertical slice at the kernel level: two node namespaces joined by a veth underlay, each with a
 * VxlanNetwork programmed with the other's published lease, ping a pod address across flannel.1.
 */
@Tag("netns")
class TwoNodesIT {

    @Test
    void podAddressOnTheOtherNodeAnswersPingThroughFlannel1() throws Exception {
        try (Node a = Node.create("vxa"); Node b = Node.create("vxb")) {
            a.ip("link", "add", "ul0", "type", "veth", "peer", "name", "ul0", "netns", b.name());
            underlay(a, "192.0.2.1");
            underlay(b, "192.0.2.2");
            pod(a, "10.244.1.1/24");
            pod(b, "10.244.2.1/24");

            a.register("", "10.244.1.0/24", a.underlay("ul0", "192.0.2.1"), null);
            b.register("", "10.244.2.0/24", b.underlay("ul0", "192.0.2.2"), null);
            // each node learns the other's lease exactly as the other published it
            a.apply(LeaseEvent.added(new Lease(Ip4Net.parse("10.244.2.0/24"), null, b.subnets.published(), null)));
            b.apply(LeaseEvent.added(new Lease(Ip4Net.parse("10.244.1.0/24"), null, a.subnets.published(), null)));

            String out = a.exec("ping", "-c", "3", "-W", "2", "10.244.2.1");
            assertThat(out).contains("3 received");
            String fromPod = a.exec("ping", "-c", "3", "-W", "2", "-I", "10.244.1.1", "10.244.2.1");
            assertThat(fromPod).contains("3 received");

            // it went through the overlay: A's flannel.1 sent and received packets
            String stats = a.ip("-s", "link", "show", "dev", "flannel.1");
            assertThat(a.ipJson("-s", "link", "show", "dev", "flannel.1").get(0).get("stats64").get("tx").get("packets").asLong())
                    .as(stats).isGreaterThanOrEqualTo(6);
            assertThat(b.ipJson("-s", "link", "show", "dev", "flannel.1").get(0).get("stats64").get("rx").get("packets").asLong())
                    .isGreaterThanOrEqualTo(6);
        }
    }

    private static void underlay(Node n, String addr) throws Exception {
        n.ip("addr", "add", addr + "/24", "dev", "ul0");
        n.ip("link", "set", "ul0", "up");
    }

    private static void pod(Node n, String cidr) throws Exception {
        n.ip("link", "add", "cni0", "type", "bridge");
        n.ip("addr", "add", cidr, "dev", "cni0");
        n.ip("link", "set", "cni0", "up");
    }
}
