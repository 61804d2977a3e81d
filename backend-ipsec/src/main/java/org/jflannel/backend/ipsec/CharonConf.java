package org.jflannel.backend.ipsec;

import java.io.IOException;
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
        return new Search(pathEnv, PATHS).find();
    }

    /**
     * Where charon is looked for, as upstream's findExecPath: {@code charon} in each directory of {@code pathEnv}
     * (a PATH value; null: none), then each of {@code paths} (upstream's list in the daemon; tests give others).
     */
    public record Search(String pathEnv, List<String> paths) {
        public Search {
            paths = List.copyOf(paths);
        }

        /** Upstream's search on the daemon's own PATH. */
        public static Search upstream() {
            return new Search(System.getenv("PATH"), PATHS);
        }

        public Optional<Path> find() {
            if (pathEnv != null) {
                for (String dir : pathEnv.split(":")) {
                    if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "charon"))) {
                        return Optional.of(Path.of(dir, "charon"));
                    }
                }
            }
            return paths.stream().map(Path::of).filter(Files::isExecutable).findFirst();
        }

        /**
         * The first charon, or upstream's error ({@code No valid charon executable found at paths [charon /usr/lib/…]},
         * "charon" standing for the PATH lookup) with the PATH searched after it (ours: upstream names no directories).
         */
        public Path require() throws IOException {
            return find().orElseThrow(() -> new IOException("No valid charon executable found at paths [charon "
                    + String.join(" ", paths) + "] (charon searched on PATH=" + (pathEnv == null ? "" : pathEnv) + ")"));
        }
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
