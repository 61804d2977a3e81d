package org.jflannel.subnet.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jflannel.core.Lease;
import org.jflannel.testsupport.etcd.EtcdProcess;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --etcd-keyfile/--etcd-certfile/--etcd-cafile} against an etcd that demands client certificates. */
@Tag("etcd")
class EtcdTlsIT {

    @Test
    void clientCertificateConnectsAndPlainHttpDoesNot(@TempDir Path dir) throws Exception {
        openssl(dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
                "-days", "1", "-subj", "/CN=jflannel-test-ca");
        signed(dir, "server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n");
        signed(dir, "client", "extendedKeyUsage=clientAuth\n");

        try (EtcdProcess etcd = EtcdProcess.start(new EtcdProcess.Tls(dir.resolve("server.crt"),
                dir.resolve("server.key"), dir.resolve("ca.crt")))) {
            EtcdOptions tls = new EtcdOptions(List.of(etcd.endpoint()), "/tls", dir.resolve("client.key").toString(),
                    dir.resolve("client.crt").toString(), dir.resolve("ca.crt").toString(), "", "");
            try (EtcdSubnetManager m = new EtcdSubnetManager(tls, null, null, EtcdAdmin.TIMINGS, () -> { })) {
                // no config stored: this error is etcd's own answer, so the TLS connection worked
                assertThatThrownBy(m::networkConfig).isInstanceOf(IOException.class)
                        .hasMessageContaining("flannel config not found in etcd store");
            }
            EtcdOptions noCert = new EtcdOptions(List.of(etcd.endpoint()), "/tls", "", "", dir.resolve("ca.crt").toString(), "", "");
            try (EtcdSubnetManager m = new EtcdSubnetManager(noCert, null, null, EtcdAdmin.TIMINGS, () -> { })) {
                assertThatThrownBy(m::networkConfig).isInstanceOf(IOException.class)
                        .hasMessageNotContaining("flannel config not found");
            }
        }
    }

    private static void signed(Path dir, String name, String ext) throws Exception {
        Files.writeString(dir.resolve(name + ".ext"), ext);
        openssl(dir, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr",
                "-subj", "/CN=" + name);
        openssl(dir, "x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", name + ".crt", "-days", "1", "-extfile", name + ".ext");
    }

    private static void openssl(Path dir, String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("openssl %s: %s", cmd, out).isZero();
    }
}
