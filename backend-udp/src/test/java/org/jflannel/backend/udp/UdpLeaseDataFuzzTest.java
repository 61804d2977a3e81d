package org.jflannel.backend.udp;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;

/**
 * A peer's udp backend data ({@code {"KernelDecap":true}} or nothing) as any writer of its lease gives it.
 * Properties: {@link UdpBackendData#kernelDecap} answers true or false, never throws (odd data means a
 * plain upstream peer); what we publish reads back as what we meant.
 */
class UdpLeaseDataFuzzTest {

    @FuzzTest(maxDuration = "5m")
    void peerBackendData(byte[] input) {
        UdpBackendData.kernelDecap(new String(input, StandardCharsets.UTF_8));
        if (!UdpBackendData.kernelDecap(UdpBackendData.publish(true)) || UdpBackendData.kernelDecap(UdpBackendData.publish(false))) {
            throw new AssertionError("publish/read disagree");
        }
    }
}
