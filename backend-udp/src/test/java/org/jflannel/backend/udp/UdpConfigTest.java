package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.jflannel.core.ConfigException;
import org.jflannel.core.NetConf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class UdpConfigTest {
    private static final String CONF = "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"udp\"%s}}";

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "''              | 8285",
        ",\"Port\":8285  | 8285",
        ",\"Port\":1     | 1",
        ",\"Port\":65535 | 65535",
        ",\"Port\":7890  | 7890",
    })
    void port(String extra, int expected) throws Exception {
        assertThat(UdpBackend.port(NetConf.parse(String.format(CONF, extra), NetConf.Mode.ETCD))).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        ",\"Port\":0       | 0",
        ",\"Port\":65536   | 65536",
        ",\"Port\":-1      | -1",
        ",\"Port\":\"x\"   | x",
        ",\"Port\":1.5     | 1.5",
    })
    void badPortIsRejectedNamingTheField(String extra, String shown) {
        assertThatThrownBy(() -> NetConf.parse(String.format(CONF, extra), NetConf.Mode.ETCD))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.field()).isEqualTo("Backend.Port"))
                .hasMessageContaining("Backend.Port")
                .hasMessageContaining(shown);
    }

    @org.junit.jupiter.api.Test
    void aVxlanConfigIsNotAcceptedByTheUdpBackend() {
        assertThatThrownBy(() -> UdpBackend.port(NetConf.parse(
                "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}", NetConf.Mode.ETCD)))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.field()).isEqualTo("Backend.Type"));
    }
}
