package org.jflannel.backend.vxlan;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;

/**
 * A peer's vxlan backend data ({@code {"VNI":1,"VtepMAC":"..."}}) as any writer of its node annotation or
 * etcd lease gives it. Properties: {@link VxlanBackendData#parse} returns the data or throws the
 * documented {@link IllegalArgumentException} naming what is wrong, never another exception; what it
 * returns is written as upstream writes it and reads back equal (decode(encode(x)) = x).
 */
class VxlanLeaseDataFuzzTest {

    @FuzzTest(maxDuration = "5m")
    void peerBackendData(byte[] input) {
        String raw = new String(input, StandardCharsets.UTF_8);
        VxlanBackendData d;
        try {
            d = VxlanBackendData.parse(raw);
        } catch (IllegalArgumentException rejected) {
            if (rejected.getMessage() == null || rejected.getMessage().isBlank()) {
                throw new AssertionError("a rejection without a reason", rejected);
            }
            return;
        }
        if (!VxlanBackendData.parse(d.toJson()).equals(d)) {
            throw new AssertionError("round trip: " + raw + " -> " + d.toJson());
        }
    }
}
