package org.jflannel.subnet.kube;

import org.jflannel.core.ConfigException;

import java.util.List;
import java.util.regex.Pattern;

/**
 * The node annotation keys flannel reads and writes (REFERENCE §4.2) under a
 * {@code --kube-annotation-prefix}, normalised by the rules of §4.3:
 * {@code flannel.alpha.coreos.com} → {@code flannel.alpha.coreos.com/backend-data},
 * {@code example.com/cni} → {@code example.com/cni-backend-data}.
 */
public record KubeAnnotations(String prefix) {

    public static final String DEFAULT_PREFIX = "flannel.alpha.coreos.com";

    /** Upstream's regexp, anchored at the end only: Go's MatchString finds a match anywhere. */
    private static final Pattern FORMAT = Pattern.compile("(?:[a-z0-9_-]+\\.)+[a-z0-9_-]+/(?:[a-z0-9_-]+-)?$");

    /** Normalises and checks {@code rawPrefix}; errors are upstream's, verbatim. */
    public static KubeAnnotations forPrefix(String rawPrefix) throws ConfigException {
        String p = rawPrefix;
        int slashes = p.length() - p.replace("/", "").length();
        if (slashes > 1) {
            throw new ConfigException("kube-annotation-prefix", "subnet/kube: prefix can contain at most single slash");
        }
        if (slashes == 0) {
            p = p + "/";
        }
        if (!p.endsWith("/") && !p.endsWith("-")) {
            p = p + "-";
        }
        if (!FORMAT.matcher(p).find()) {
            throw new ConfigException("kube-annotation-prefix", "subnet/kube: prefix must be in a format: fqdn/[0-9a-z-_]*");
        }
        return new KubeAnnotations(p);
    }

    public String subnetKubeManaged() {
        return prefix + "kube-subnet-manager";
    }

    public String backendType() {
        return prefix + "backend-type";
    }

    public String backendData() {
        return prefix + "backend-data";
    }

    public String backendV6Data() {
        return prefix + "backend-v6-data";
    }

    public String publicIp() {
        return prefix + "public-ip";
    }

    public String publicIpv6() {
        return prefix + "public-ipv6";
    }

    public String publicIpOverwrite() {
        return prefix + "public-ip-overwrite";
    }

    public String publicIpv6Overwrite() {
        return prefix + "public-ipv6-overwrite";
    }

    public String nodePublicIp() {
        return prefix + "node-public-ip";
    }

    public String nodePublicIpv6() {
        return prefix + "node-public-ipv6";
    }

    /** The keys a peer's lease is made of; all that is kept of other nodes' annotations. */
    public List<String> leaseKeys() {
        return List.of(subnetKubeManaged(), backendType(), backendData(), backendV6Data(), publicIp(), publicIpv6());
    }
}
