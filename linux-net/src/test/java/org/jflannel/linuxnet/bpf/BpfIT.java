package org.jflannel.linuxnet.bpf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.TestNs;
import org.jflannel.linuxnet.bpf.BpfAsm.Cond;
import org.jflannel.linuxnet.bpf.BpfAsm.Size;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.testbase.NetnsPrivilege;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * bpf(2) for real: maps hold what we put, the kernel's verifier refuses a bad program with its
 * reason in our exception, and a classifier attached to a device's tcx hook runs for its packets
 * (it counts them in a map) until the link is closed.
 */
@Tag("netns")
class BpfIT {

    @Test
    void mapsHoldWhatWasPutUntilDeletedAndLpmTriesMatchTheLongestPrefix() throws Exception {
        NetnsPrivilege.require();
        try (BpfMap hash = BpfMap.create(BpfMap.Type.HASH, "jfl_test_hash", 4, 8, 16);
                BpfMap lpm = BpfMap.create(BpfMap.Type.LPM_TRIE, "jfl_test_lpm", 8, 4, 16)) {
            byte[] key = {10, 0, 0, 1};
            hash.put(key, new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
            assertThat(hash.get(key)).hasValueSatisfying(v -> assertThat(v).containsExactly(1, 2, 3, 4, 5, 6, 7, 8));
            assertThat(hash.delete(key)).isTrue();
            assertThat(hash.delete(key)).as("already gone").isFalse();
            assertThat(hash.get(key)).isEmpty();
            assertThatThrownBy(() -> hash.put(new byte[3], new byte[8])).hasMessageContaining("key must be 4 bytes");

            lpm.put(lpmKey(16, 10, 244, 0, 0), new byte[] {1, 0, 0, 0});
            lpm.put(lpmKey(24, 10, 244, 2, 0), new byte[] {2, 0, 0, 0});
            assertThat(lpm.get(lpmKey(32, 10, 244, 2, 9))).hasValueSatisfying(v -> assertThat(v[0]).isEqualTo((byte) 2));
            assertThat(lpm.get(lpmKey(32, 10, 244, 3, 9))).hasValueSatisfying(v -> assertThat(v[0]).isEqualTo((byte) 1));
            assertThat(lpm.get(lpmKey(32, 10, 245, 0, 1))).isEmpty();
        }
    }

    @Test
    void theVerifiersRefusalIsInTheException() {
        NetnsPrivilege.require();
        // exit without setting r0: the verifier says "R0 !read_ok"
        byte[] bad = new BpfAsm().exit().build();
        assertThatThrownBy(() -> BpfProgram.loadClassifier("jfl_test_bad", bad))
                .isInstanceOf(NetlinkException.class)
                .hasMessageContaining("BPF_PROG_LOAD jfl_test_bad")
                .hasMessageContaining("verifier")
                .hasMessageContaining("R0");
    }

    @Test
    void anAttachedClassifierSeesTheDevicesPacketsUntilItsLinkCloses() throws Exception {
        try (TestNs t = TestNs.create("bpf"); TestNs peer = TestNs.create("bpfp");
                BpfMap counter = BpfMap.create(BpfMap.Type.ARRAY, "jfl_test_count", 4, 8, 1)) {
            // counter[0] += 1 for every packet; TCX_NEXT (-1): leave the packet to the stack
            byte[] prog = new BpfAsm()
                    .storeImm(Size.W, BpfAsm.FP, -4, 0)
                    .loadMap(BpfAsm.R1, counter).movReg(BpfAsm.R2, BpfAsm.FP).add(BpfAsm.R2, -4).call(BpfAsm.MAP_LOOKUP_ELEM)
                    .jump(Cond.EQ, BpfAsm.R0, 0, "out").mov(BpfAsm.R1, 1).atomicAdd64(BpfAsm.R0, 0, BpfAsm.R1)
                    .label("out").mov(BpfAsm.R0, -1).exit().build();
            t.exec("ip", "link", "add", "jb1", "type", "veth", "peer", "name", "jb0", "netns", peer.name());
            peer.exec("ip", "addr", "add", "10.98.0.1/24", "dev", "jb0");
            t.exec("ip", "addr", "add", "10.98.0.2/24", "dev", "jb1");
            peer.exec("ip", "link", "set", "jb0", "up");
            t.exec("ip", "link", "set", "jb1", "up");
            try (BpfProgram p = BpfProgram.loadClassifier("jfl_test_count", prog)) {
                BpfLink link = t.ns.call(() -> {
                    try (RtNetlink nl = RtNetlink.open()) {
                        return BpfLink.attach(p, nl.link("jb1").orElseThrow().index(), BpfLink.Hook.TCX_INGRESS);
                    }
                });
                try (link) {
                    assertThat(peer.exec("ping", "-c", "3", "-W", "2", "10.98.0.2")).contains("3 received");
                    assertThat(count(counter)).as("packets jb1 received while attached").isGreaterThanOrEqualTo(3);
                }
                long atClose = count(counter);
                assertThat(peer.exec("ping", "-c", "2", "-W", "2", "10.98.0.2")).contains("2 received");
                assertThat(count(counter)).as("nothing counted once the link is closed").isEqualTo(atClose);
            }
        }
    }

    private static long count(BpfMap counter) throws NetlinkException {
        return ByteBuffer.wrap(counter.get(new byte[4]).orElseThrow()).order(ByteOrder.nativeOrder()).getLong();
    }

    private static byte[] lpmKey(int prefix, int a, int b, int c, int d) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putInt(prefix)
                .put((byte) a).put((byte) b).put((byte) c).put((byte) d).array();
    }
}
