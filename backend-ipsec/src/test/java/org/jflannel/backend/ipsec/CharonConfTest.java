package org.jflannel.backend.ipsec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CharonConfTest {
    @TempDir
    Path dir;

    @Test
    void theConfNamesTheSocketThePortsAndThePlugins() {
        String conf = CharonConf.strongswanConf(Path.of("/run/x/charon.vici"));
        assertThat(conf).contains("socket = unix:///run/x/charon.vici", "port = 500", "port_nat_t = 4500",
                "install_routes = no", "load = random nonce aes sha1 sha2 hmac kdf gmp openssl pem pkcs1 x509 kernel-netlink socket-default vici");
    }

    @Test
    void charonOnPathComesBeforeTheWellKnownPaths() throws Exception {
        Path charon = Files.createFile(dir.resolve("charon"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        assertThat(CharonConf.findExecutable("/nonexistent:" + dir)).contains(charon);
        assertThat(CharonConf.findExecutable("/nonexistent")).isEqualTo(CharonConf.PATHS.stream().map(Path::of)
                .filter(Files::isExecutable).findFirst());
    }
}
