package org.jflannel.subnet.etcd;

import java.util.List;

/**
 * How to reach etcd, from the upstream flags {@code --etcd-endpoints}, {@code --etcd-prefix},
 * {@code --etcd-keyfile}, {@code --etcd-certfile}, {@code --etcd-cafile}, {@code --etcd-username},
 * {@code --etcd-password} (REFERENCE §1, §5.1). Empty strings mean "not set", as upstream.
 * {@link #toString()} masks the password so that options can be logged.
 *
 * @param endpoints client URLs ({@code http://127.0.0.1:2379}); at least one
 * @param prefix    key prefix without a trailing slash, default {@value #DEFAULT_PREFIX}
 */
public record EtcdOptions(
        List<String> endpoints,
        String prefix,
        String keyFile,
        String certFile,
        String caFile,
        String username,
        String password) {

    public static final String DEFAULT_PREFIX = "/coreos.com/network";
    public static final List<String> DEFAULT_ENDPOINTS = List.of("http://127.0.0.1:4001", "http://127.0.0.1:2379");

    public EtcdOptions {
        endpoints = endpoints == null || endpoints.isEmpty() ? DEFAULT_ENDPOINTS : List.copyOf(endpoints);
        for (String e : endpoints) {
            if (e.isBlank()) {
                throw new IllegalArgumentException("--etcd-endpoints: empty endpoint in " + endpoints);
            }
        }
        prefix = prefix == null || prefix.isEmpty() ? DEFAULT_PREFIX : prefix;
        while (prefix.length() > 1 && prefix.endsWith("/")) {
            prefix = prefix.substring(0, prefix.length() - 1); // Go's path.Join drops it too
        }
        keyFile = nullToEmpty(keyFile);
        certFile = nullToEmpty(certFile);
        caFile = nullToEmpty(caFile);
        username = nullToEmpty(username);
        password = nullToEmpty(password);
    }

    /** Plain endpoints and the default prefix, no TLS, no auth (tests, the demo). */
    public static EtcdOptions of(List<String> endpoints, String prefix) {
        return new EtcdOptions(endpoints, prefix, "", "", "", "", "");
    }

    /** TLS only when both a key and a certificate are given (upstream rule; the CA alone does nothing). */
    public boolean tls() {
        return !keyFile.isEmpty() && !certFile.isEmpty();
    }

    public boolean auth() {
        return !username.isEmpty();
    }

    /** {@code <prefix>/config}. */
    public String configKey() {
        return join("config");
    }

    /** {@code <prefix>/subnets}, without a trailing slash: what upstream lists and watches. */
    public String subnetsPrefix() {
        return join("subnets");
    }

    /** {@code <prefix>/subnets/<leaseKey>}. */
    public String subnetKey(String leaseKey) {
        return subnetsPrefix() + "/" + leaseKey;
    }

    private String join(String name) {
        return prefix.equals("/") ? "/" + name : prefix + "/" + name;
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }

    @Override
    public String toString() {
        return "EtcdOptions[endpoints=" + endpoints + ", prefix=" + prefix + ", keyFile=" + keyFile
                + ", certFile=" + certFile + ", caFile=" + caFile + ", username=" + username
                + ", password=" + (password.isEmpty() ? "" : "****") + "]";
    }
}
