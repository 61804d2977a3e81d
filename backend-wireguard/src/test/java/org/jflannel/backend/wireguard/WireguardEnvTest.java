package org.jflannel.backend.wireguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The backend's environment variables: values, defaults, and a bad value named. */
class WireguardEnvTest {

    @Test
    void dataplaneIsAutoUnlessTold() {
        assertThat(WireguardBackend.implementation(Map.of())).isEqualTo(WireguardBackend.Implementation.AUTO);
        assertThat(WireguardBackend.implementation(Map.of("JFLANNEL_WG_DATAPLANE", "auto"))).isEqualTo(WireguardBackend.Implementation.AUTO);
        assertThat(WireguardBackend.implementation(Map.of("JFLANNEL_WG_DATAPLANE", "kernel"))).isEqualTo(WireguardBackend.Implementation.KERNEL);
        assertThat(WireguardBackend.implementation(Map.of("JFLANNEL_WG_DATAPLANE", "userspace")))
                .isEqualTo(WireguardBackend.Implementation.USERSPACE);
        assertThatThrownBy(() -> WireguardBackend.implementation(Map.of("JFLANNEL_WG_DATAPLANE", "Kernel")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("JFLANNEL_WG_DATAPLANE: expected auto, kernel or userspace, got \"Kernel\"");
    }

    @Test
    void cryptoThreadsAndOffloadsAreCheckedToo() {
        assertThat(WireguardBackend.cryptoThreads(Map.of("JFLANNEL_WG_CRYPTO_THREADS", "0"), 8)).isZero();
        assertThat(WireguardBackend.cryptoThreads(Map.of("JFLANNEL_WG_CRYPTO_THREADS", "5"), 2)).isEqualTo(5);
        // the default: none on 1 or 2 CPUs, then CPUs - 2 up to 3
        assertThat(WireguardBackend.cryptoThreads(Map.of(), 1)).isZero();
        assertThat(WireguardBackend.cryptoThreads(Map.of(), 2)).isZero();
        assertThat(WireguardBackend.cryptoThreads(Map.of(), 3)).isEqualTo(1);
        assertThat(WireguardBackend.cryptoThreads(Map.of(), 4)).isEqualTo(2);
        assertThat(WireguardBackend.cryptoThreads(Map.of(), 64)).isEqualTo(3);
        assertThatThrownBy(() -> WireguardBackend.cryptoThreads(Map.of("JFLANNEL_WG_CRYPTO_THREADS", "-1"), 2))
                .hasMessageContaining("JFLANNEL_WG_CRYPTO_THREADS: expected 0..64");
        assertThat(WireguardBackend.offloadWanted(Map.of())).isTrue();
        assertThatThrownBy(() -> WireguardBackend.offloadWanted(Map.of("JFLANNEL_WG_OFFLOAD", "yes")))
                .hasMessageContaining("JFLANNEL_WG_OFFLOAD: expected 0 or 1");
    }
}
