package org.jflannel.backend.ipsec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import org.jflannel.core.ConfigException;
import org.junit.jupiter.api.Test;

class IpsecSettingsTest {
    @Test
    void withoutTheVariablesCharonIsFoundAsUpstreamAndItsSocketIsUpstreams() throws Exception {
        IpsecSettings s = IpsecSettings.fromEnv(Map.of());
        assertThat(s.charonCommand()).isNull();
        assertThat(s.vici()).isEqualTo(Path.of("/var/run/charon.vici"));
        assertThat(s.stateDir()).isEqualTo(Path.of("/run/flannel/ipsec"));
    }

    @Test
    void aPrivateRunWrapsCharonAndKeepsItsSocketInTheDirectory() throws Exception {
        IpsecSettings s = IpsecSettings.fromEnv(Map.of("JFLANNEL_IPSEC_DIR", "/var/tmp/n1", "JFLANNEL_IPSEC_PRIVATE_RUN", "1"));
        assertThat(s.vici()).isEqualTo(Path.of("/var/tmp/n1/charon.vici"));
        assertThat(s.charonCommand()).startsWith("unshare", "-m").endsWith("/var/tmp/n1");
        assertThat(s.charonCommand().get(s.charonCommand().size() - 2)).endsWith("/charon");
        assertThat(s.privateRun()).isTrue();
    }

    @Test
    void badValuesNameTheirVariable() {
        assertThatThrownBy(() -> IpsecSettings.fromEnv(Map.of("JFLANNEL_IPSEC_PRIVATE_RUN", "yes")))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.field()).isEqualTo("JFLANNEL_IPSEC_PRIVATE_RUN"))
                .hasMessage("expected 0 or 1, got \"yes\"");
        assertThatThrownBy(() -> IpsecSettings.fromEnv(Map.of("JFLANNEL_IPSEC_PRIVATE_RUN", "1")))
                .hasMessageContaining("needs JFLANNEL_IPSEC_DIR (the directory mounted on charon's /run)");
        assertThatThrownBy(() -> IpsecSettings.fromEnv(Map.of("JFLANNEL_IPSEC_DIR", "rel")))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.field()).isEqualTo("JFLANNEL_IPSEC_DIR"));
    }
}
