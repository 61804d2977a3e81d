package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * The API server's serving certificate, as a cluster's CA would issue it: an RSA key and a
 * self-signed certificate for IP 127.0.0.1 (the address pods reach the API at here), made with the
 * JDK's {@code keytool}. {@link #caPem()} is what kubelet puts in the pod's service-account
 * {@code ca.crt}; {@link #context()} serves TLS with it.
 */
final class ApiServerTls {
    private static final String PASSWORD = "jflannel-test";
    private static final Duration KEYTOOL_WITHIN = Duration.ofSeconds(60);

    private final Path keystore;
    private final Path caPem;

    private ApiServerTls(Path keystore, Path caPem) {
        this.keystore = keystore;
        this.caPem = caPem;
    }

    static ApiServerTls create(Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        Path ks = dir.resolve("apiserver.p12");
        Path pem = dir.resolve("ca.crt");
        Cmd.run(KEYTOOL_WITHIN, List.of(keytool, "-genkeypair", "-alias", "apiserver", "-keyalg", "RSA", "-keysize",
                "2048", "-validity", "2", "-dname", "CN=kube-apiserver", "-ext", "SAN=ip:127.0.0.1,dns:localhost",
                "-keystore", ks.toString(), "-storetype", "PKCS12", "-storepass", PASSWORD, "-keypass", PASSWORD)).orThrow();
        Cmd.run(KEYTOOL_WITHIN, List.of(keytool, "-exportcert", "-rfc", "-alias", "apiserver", "-keystore", ks.toString(),
                "-storetype", "PKCS12", "-storepass", PASSWORD, "-file", pem.toString())).orThrow();
        return new ApiServerTls(ks, pem);
    }

    Path caPem() {
        return caPem;
    }

    SSLContext context() throws IOException {
        try (InputStream in = Files.newInputStream(keystore)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, PASSWORD.toCharArray());
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, PASSWORD.toCharArray());
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), null, null);
            return ctx;
        } catch (java.security.GeneralSecurityException e) {
            throw new IOException("cannot load " + keystore + ": " + e.getMessage(), e);
        }
    }
}
