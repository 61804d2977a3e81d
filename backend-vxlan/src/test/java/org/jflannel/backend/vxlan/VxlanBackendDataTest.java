package org.jflannel.backend.vxlan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.jflannel.core.MacAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class VxlanBackendDataTest {

    @Test
    void writesUpstreamBytes() {
        assertThat(new VxlanBackendData(1, MacAddress.parse("12:C6:65:89:B4:E3")).toJson())
                .isEqualTo("{\"VNI\":1,\"VtepMAC\":\"12:c6:65:89:b4:e3\"}");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{\"VNI\":1,\"VtepMAC\":\"12:c6:65:89:b4:e3\"}            | 1 | 12:c6:65:89:b4:e3",
        "{\"vni\":7,\"vtepmac\":\"12:C6:65:89:B4:E3\"}            | 7 | 12:c6:65:89:b4:e3",
        "{\"VtepMAC\":\"0e:00:00:00:00:01\",\"Extra\":[1,2]}      | 0 | 0e:00:00:00:00:01",
        "{ \"VNI\" : 4096 , \"VtepMAC\" : \"0e:00:00:00:00:02\" } | 4096 | 0e:00:00:00:00:02",
    })
    void readsLikeGo(String json, int vni, String mac) {
        VxlanBackendData d = VxlanBackendData.parse(json);
        assertThat(d.vni()).isEqualTo(vni);
        assertThat(d.vtepMac()).isEqualTo(MacAddress.parse(mac));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', nullValues = "NULL", value = {
        "NULL                                  | unexpected end of JSON input",
        "''                                    | unexpected end of JSON input",
        "garbage                               | invalid JSON",
        "[1,2]                                 | expected a JSON object",
        "{\"VNI\":1}                           | VtepMAC",
        "{\"VNI\":1,\"VtepMAC\":null}          | VtepMAC",
        "{\"VNI\":1,\"VtepMAC\":\"zz\"}        | VtepMAC: invalid MAC address",
        "{\"VNI\":\"x\",\"VtepMAC\":\"0e:00:00:00:00:01\"} | VNI",
    })
    void rejectsWithTheReason(String json, String reason) {
        assertThatThrownBy(() -> VxlanBackendData.parse(json))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(reason);
    }
}
