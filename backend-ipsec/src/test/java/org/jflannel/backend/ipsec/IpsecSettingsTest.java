package org.jflannel.backend.ipsec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.jflannel.core.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IpsecSettingsTest {
    @TempDir
    Path dir;

    @Test
    void withoutTheVariablesCharonIsFoundAsUpstreamAndItsSocketIsUpstreams() throws Exception {
        IpsecSettings s = IpsecSettings.fromEnv(Map.of());
        assertThat(s.charonCommand()).isNull();
        assertThat(s.vici()).isEqualTo(Path.of("/var/run/charon.vici"));
        assertThat(s.stateDir()).isEqualTo(Path.of("/run/flannel/ipsec"));
    }

    @Test
    void aPrivateRunWrapsCharonAndKeepsItsSocketAndPidfileInTheDirectory() throws Exception {
        Path charon = Files.createFile(dir.resolve("charon"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        IpsecSettings s = IpsecSettings.fromEnv(Map.of("JFLANNEL_IPSEC_DIR", "/var/tmp/n1", "JFLANNEL_IPSEC_PRIVATE_RUN", "1",
                "PATH", dir.toString()));
        assertThat(s.vici()).isEqualTo(Path.of("/var/tmp/n1/charon.vici"));
        assertThat(s.command()).startsWith("unshare", "-m").endsWith(charon.toString(), "/var/tmp/n1");
        assertThat(s.privateRun()).isTrue();
        assertThat(s.pidFile()).isEqualTo(Path.of("/var/tmp/n1/charon.pid"));
        assertThat(IpsecSettings.fromEnv(Map.of("PATH", dir.toString())).command()).containsExactly(charon.toString());
        assertThat(IpsecSettings.fromEnv(Map.of()).pidFile()).as("Debian's charon's pidfile").isEqualTo(Path.of("/var/run/charon.pid"));
    }

    @Test
    void charonMissingIsUpstreamsErrorNamingTheProgramAndEveryPathSearched() throws Exception {
        Path empty = Files.createDirectory(dir.resolve("empty"));
        IpsecSettings d = IpsecSettings.fromEnv(Map.of("JFLANNEL_IPSEC_DIR", "/var/tmp/n1", "JFLANNEL_IPSEC_PRIVATE_RUN", "1"));
        IpsecSettings s = new IpsecSettings(null, d.stateDir(), d.vici(), false, d.charonStartTimeout(), d.timing(), true,
                new CharonConf.Search(empty + ":/nonexistent", List.of(dir.resolve("lib/charon").toString(), "/nonexistent/charon")));
        assertThatThrownBy(s::command).isInstanceOf(java.io.IOException.class).hasMessage(
                "No valid charon executable found at paths [charon " + dir.resolve("lib/charon") + " /nonexistent/charon]"
                        + " (charon searched on PATH=" + empty + ":/nonexistent)");
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
