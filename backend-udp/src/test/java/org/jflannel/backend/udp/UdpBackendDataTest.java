package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

class UdpBackendDataTest {

    @Test
    void weSayItOnlyWhenOurKernelDecapsulates() {
        assertThat(UdpBackendData.publish(true)).isEqualTo("{\"KernelDecap\":true}");
        assertThat(UdpBackendData.publish(false)).as("upstream's: no backend data").isNull();
        assertThat(UdpBackendData.kernelDecap(UdpBackendData.publish(true))).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"KernelDecap\":true}", "{\"kerneldecap\":true}", "{\"VNI\":1,\"KernelDecap\":true}"})
    void aPeerThatSaysSoDecapsulates(String raw) {
        assertThat(UdpBackendData.kernelDecap(raw)).isTrue();
    }

    @ParameterizedTest
    @NullSource
    @ValueSource(strings = {"", "null", "{}", "{\"KernelDecap\":false}", "{\"KernelDecap\":\"true\"}", "{\"KernelDecap\":1}",
            "[true]", "{\"KernelDecap\":tru", "{\"VNI\":1,\"VtepMAC\":\"12:c6:65:89:b4:e3\"}"})
    void anythingElseMeansNo(String raw) {
        assertThat(UdpBackendData.kernelDecap(raw)).isFalse();
    }
}
