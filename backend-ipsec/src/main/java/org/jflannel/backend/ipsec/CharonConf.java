package org.jflannel.backend.ipsec;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * What charon is started with. Upstream runs the first charon of a list of well-known paths with the
 * distribution's own {@code strongswan.conf} and the default VICI socket {@code /var/run/charon.vici};
 * we write our own {@code strongswan.conf} (named by {@code STRONGSWAN_CONF}) so the plugins, the socket
 * and the ports are explicit and nothing of the host's strongSwan setup leaks in.
 */
public final class CharonConf {
    /** Upstream's search list (handle_charon.go's findExecPath), PATH first. */
    static final List<String> PATHS = List.of("/usr/lib/strongswan/charon", "/usr/lib/ipsec/charon",
            "/usr/libexec/strongswan/charon", "/usr/libexec/ipsec/charon");
    public static final Path DEFAULT_VICI = Path.of("/var/run/charon.vici");

    /**
     * The plugins: crypto for IKE (aes, sha1/sha2, hmac, kdf (5.9.8+: the PRF-based key derivation), gmp for MODP
     * groups, openssl for ECP and GCM),
     * nonce/random, the kernel interface (kernel-netlink), the IKE sockets (socket-default) and vici.
     */
    static final String PLUGINS = "random nonce aes sha1 sha2 hmac kdf gmp openssl pem pkcs1 x509 kernel-netlink socket-default vici";

    private CharonConf() {
    }

    /** The first charon executable: {@code charon} on PATH, then upstream's well-known paths. */
    public static Optional<Path> findExecutable(String pathEnv) {
        if (pathEnv != null) {
            for (String dir : pathEnv.split(":")) {
                if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "charon"))) {
                    return Optional.of(Path.of(dir, "charon"));
                }
            }
        }
        return PATHS.stream().map(Path::of).filter(Files::isExecutable).findFirst();
    }

    /**
     * Our {@code strongswan.conf}: charon on the standard IKE ports (500, NAT-T 4500), the VICI socket
     * at {@code vici}, no routes or virtual IPs installed by charon (flanneld owns the kernel's policies;
     * upstream's children say {@code policies = no}), logging to stderr at level 1.
     */
    public static String strongswanConf(Path vici) {
        return """
                # written by flanneld (jflannel) for the ipsec backend; charon reads it through STRONGSWAN_CONF
                charon {
                  load = %s
                  port = 500
                  port_nat_t = 4500
                  install_routes = no
                  install_virtual_ip = no
                  plugins {
                    vici {
                      socket = unix://%s
                    }
                  }
                  filelog {
                    stderr {
                      default = 1
                    }
                  }
                }
                """.formatted(PLUGINS, vici);
    }
}
