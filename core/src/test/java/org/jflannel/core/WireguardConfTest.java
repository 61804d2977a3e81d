package org.jflannel.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jflannel.core.NetConf.Mode.ETCD;
import static org.jflannel.core.NetConf.Mode.KUBE;
import static org.jflannel.core.NetConfTest.parseError;

import java.util.Base64;
import java.util.stream.Stream;
import org.jflannel.core.BackendConfig.Wireguard;
import org.jflannel.core.BackendConfig.WireguardMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** net-conf.json {@code Backend} of type wireguard: upstream's defaults, keys and error texts (REFERENCE §15). */
class WireguardConfTest {
    private static final byte[] KEY = new byte[32];
    static {
        for (int i = 0; i < 32; i++) {
            KEY[i] = (byte) (i * 7 + 1);
        }
    }
    private static final String KEY64 = Base64.getEncoder().encodeToString(KEY);

    private static String conf(String backend) {
        return "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"wireguard\"" + (backend.isEmpty() ? "" : "," + backend) + "}}";
    }

    static Stream<Arguments> good() {
        return Stream.of(
                Arguments.of("", new Wireguard(51820, 51821, 0, null, 0, WireguardMode.SEPARATE)),
                Arguments.of("\"ListenPort\":5000,\"ListenPortV6\":5001", new Wireguard(5000, 5001, 0, null, 0, WireguardMode.SEPARATE)),
                // Go's decoder matches keys case-insensitively; null keeps the default
                Arguments.of("\"listenport\":6000,\"mtu\":1400,\"ListenPortV6\":null", new Wireguard(6000, 51821, 1400, null, 0, WireguardMode.SEPARATE)),
                Arguments.of("\"PSK\":\"" + KEY64 + "\"", new Wireguard(51820, 51821, 0, KEY, 0, WireguardMode.SEPARATE)),
                Arguments.of("\"PSK\":\"\"", new Wireguard(51820, 51821, 0, null, 0, WireguardMode.SEPARATE)),
                Arguments.of("\"PersistentKeepaliveInterval\":25", new Wireguard(51820, 51821, 0, null, 25, WireguardMode.SEPARATE)),
                Arguments.of("\"Mode\":\"auto\"", new Wireguard(51820, 51821, 0, null, 0, WireguardMode.AUTO)),
                Arguments.of("\"Mode\":\"ipv4\"", new Wireguard(51820, 51821, 0, null, 0, WireguardMode.IPV4)),
                Arguments.of("\"Mode\":\"ipv6\"", new Wireguard(51820, 51821, 0, null, 0, WireguardMode.IPV6)),
                Arguments.of("\"Mode\":\"separate\"", new Wireguard(51820, 51821, 0, null, 0, WireguardMode.SEPARATE)),
                // the backend type itself is matched case-insensitively, as for the other backends
                Arguments.of("\"Mode\":null", new Wireguard(51820, 51821, 0, null, 0, WireguardMode.SEPARATE)));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("good")
    void parsesWithUpstreamDefaults(String backend, Wireguard expected) throws ConfigException {
        for (NetConf.Mode mode : NetConf.Mode.values()) {
            NetConf c = NetConf.parse(conf(backend), mode);
            assertThat(c.backend()).isEqualTo(expected);
            assertThat(c.backend().type()).isEqualTo("wireguard");
        }
    }

    static Stream<Arguments> bad() {
        return Stream.of(
                Arguments.of("\"Mode\":\"Auto\"", "Backend.Mode", "no valid Mode configured"),
                Arguments.of("\"Mode\":\"dual\"", "Backend.Mode", "no valid Mode configured"),
                Arguments.of("\"Mode\":\"\"", "Backend.Mode", "no valid Mode configured"),
                Arguments.of("\"Mode\":4", "Backend.Mode", "error decoding backend config: json: cannot unmarshal number into Go struct field .Mode of type wireguard.Mode"),
                Arguments.of("\"ListenPort\":\"51820\"", "Backend.ListenPort", "error decoding backend config: json: cannot unmarshal string into Go struct field .ListenPort of type int"),
                Arguments.of("\"ListenPortV6\":1.5", "Backend.ListenPortV6", "error decoding backend config: json: cannot unmarshal number 1.5 into Go struct field .ListenPortV6 of type int"),
                Arguments.of("\"ListenPort\":0", "Backend.ListenPort", "expected 1..65535, got 0"),
                Arguments.of("\"ListenPort\":70000", "Backend.ListenPort", "expected 1..65535, got 70000"),
                Arguments.of("\"ListenPortV6\":-1", "Backend.ListenPortV6", "expected 1..65535, got -1"),
                Arguments.of("\"MTU\":-5", "Backend.MTU", "expected 0..65535"),
                Arguments.of("\"MTU\":true", "Backend.MTU", "cannot unmarshal bool into Go struct field .MTU of type int"),
                Arguments.of("\"PersistentKeepaliveInterval\":\"25s\"", "Backend.PersistentKeepaliveInterval",
                        "cannot unmarshal string into Go struct field .PersistentKeepaliveInterval of type time.Duration"),
                Arguments.of("\"PersistentKeepaliveInterval\":-1", "Backend.PersistentKeepaliveInterval", "expected 0..65535 seconds, got -1"),
                Arguments.of("\"PSK\":123", "Backend.PSK", "cannot unmarshal number into Go struct field .PSK of type string"),
                Arguments.of("\"PSK\":\"c2hvcnQ=\"", "Backend.PSK", "could not parse PSK: wgtypes: incorrect key size: 5"),
                Arguments.of("\"PSK\":\"not*base64\"", "Backend.PSK", "could not parse PSK: wgtypes: failed to parse base64-encoded key: illegal base64 data at input byte 3"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("bad")
    void rejectsNamingTheField(String backend, String field, String message) {
        for (NetConf.Mode mode : new NetConf.Mode[] {ETCD, KUBE}) {
            ConfigException e = parseError(conf(backend), mode);
            assertThat(e.field()).isEqualTo(field);
            assertThat(e.getMessage()).contains(field + ": ").contains(message);
        }
    }

    @org.junit.jupiter.api.Test
    void neverPrintsThePsk() throws ConfigException {
        NetConf c = NetConf.parse(conf("\"PSK\":\"" + KEY64 + "\""), ETCD);
        assertThat(c.backend().toString()).doesNotContain(KEY64).contains("psk=set");
        assertThat(((Wireguard) c.backend()).psk()).isEqualTo(KEY);
    }
}
