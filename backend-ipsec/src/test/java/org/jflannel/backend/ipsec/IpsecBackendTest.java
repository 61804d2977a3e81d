package org.jflannel.backend.ipsec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.NetConf;
import org.jflannel.testsupport.backend.FakeSubnets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Registration on a host without charon: upstream's error, before any lease is taken or kernel touched. */
class IpsecBackendTest {
    @TempDir
    Path dir;

    @Test
    void aHostWithoutCharonIsRefusedNamingTheProgramAndThePathsSearchedAndTakesNoLease() throws Exception {
        NetConf conf = NetConf.parse(IpsecNode.conf(""), NetConf.Mode.KUBE);
        FakeSubnets subnets = new FakeSubnets(conf, Ip4Net.parse("10.244.1.0/24"), null);
        Inet4Address ip = (Inet4Address) InetAddress.getByName("192.0.2.1");
        ExternalInterface ext = new ExternalInterface("ul0", 2, 1500, ip, null, ip, null);
        Path empty = Files.createDirectory(dir.resolve("bin"));
        IpsecSettings d = IpsecSettings.defaults();
        List<String> paths = List.of(dir.resolve("usr/lib/ipsec/charon").toString(), dir.resolve("usr/libexec/ipsec/charon").toString());
        IpsecSettings settings = new IpsecSettings(null, dir.resolve("state"), dir.resolve("state/charon.vici"), false,
                d.charonStartTimeout(), d.timing(), false, new CharonConf.Search(empty.toString(), paths));

        assertThatThrownBy(() -> new IpsecBackend(ext, Runnable::run, settings).register(conf, subnets))
                .isInstanceOf(IOException.class)
                .hasMessage("No valid charon executable found at paths [charon " + String.join(" ", paths) + "] (charon searched on PATH=" + empty + ")");
        assertThat(subnets.published()).as("no lease taken").isNull();
        assertThat(dir.resolve("state")).doesNotExist();
    }
}
