package org.jflannel.testsupport.netns;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The capture sees what crossed the node's devices, and only what its filter lets through. */
@Tag("netns")
class PacketCaptureIT {

    @Test
    void capturesTheEchoesOnTheNodesLoopbackAndNotWhatTheFilterExcludes() throws Exception {
        try (NodeNamespace n = new NodeNamespace("pcap"); PacketCapture capture = PacketCapture.start(n, "icmp")) {
            n.exec("ping", "-c", "2", "-W", "2", "127.0.0.1");
            n.execAnyExit("bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/9 || true");
            String text = capture.stop();
            assertThat(text).contains("127.0.0.1 > 127.0.0.1: ICMP echo request").contains("ICMP echo reply")
                    .doesNotContain("Flags [S]");
        }
    }
}
