package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fast path's warm-up plays whole requests through the daemon's code, touches nothing and counts nothing. */
class RehearsalTest {

    @TempDir
    Path dir;

    @Test
    void everyPlayedAddAndDelSucceedsUncounted() throws Exception {
        Path subnetEnv = Files.writeString(dir.resolve("subnet.env"),
            "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n");
        try (CniServer server = CniServer.start(dir.resolve("cni.sock"), subnetEnv, 8)) {
            assertThat(server.rehearse(subnetEnv, 5)).isEqualTo(10);
            assertThat(server.served()).isZero();
            assertThat(server.fallbacks()).isZero();
        }
        assertThat(Path.of("/rehearsal")).doesNotExist();
    }

    @Test
    void aSubnetFileTheServerDoesNotServeFallsBackUncounted() throws Exception {
        Path subnetEnv = Files.writeString(dir.resolve("subnet.env"), "FLANNEL_NETWORK=10.244.0.0/16\n");
        try (CniServer server = CniServer.start(dir.resolve("cni.sock"), dir.resolve("other.env"), 8)) {
            // the ADDs are told to fall back (not a success); the DELs need no subnet.env
            assertThat(server.rehearse(subnetEnv, 2)).isEqualTo(2);
            assertThat(server.fallbacks()).isZero();
        }
    }
}
