package org.jflannel.core;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What flanneld writes to {@code --subnet-file} (REFERENCE §3), and what it reads back from a
 * previous run. Owns that file; the CNI plugin's reader is {@code CniSubnetEnv}.
 *
 * @param network     the cluster IPv4 network ({@code Network}), null when IPv4 is off
 * @param subnet      this node's IPv4 lease subnet (network address, e.g. {@code 10.244.1.0/24}), null when IPv4 is off
 * @param ipv6Network the cluster IPv6 network, null when IPv6 is off
 * @param ipv6Subnet  this node's IPv6 lease subnet, null when IPv6 is off
 * @param mtu         FLANNEL_MTU, the backend network's MTU
 * @param ipMasq      FLANNEL_IPMASQ, the value of {@code --ip-masq}
 */
public record SubnetEnv(Ip4Net network, Ip4Net subnet, Ip6Net ipv6Network, Ip6Net ipv6Subnet, int mtu, boolean ipMasq) {
    private static final Logger LOG = LoggerFactory.getLogger(SubnetEnv.class);

    public SubnetEnv {
        if ((network == null) != (subnet == null)) {
            throw new IllegalArgumentException("IPv4 network and subnet go together, got network=" + network + " subnet=" + subnet);
        }
        if ((ipv6Network == null) != (ipv6Subnet == null)) {
            throw new IllegalArgumentException(
                    "IPv6 network and subnet go together, got network=" + ipv6Network + " subnet=" + ipv6Subnet);
        }
        if (network == null && ipv6Network == null) {
            throw new IllegalArgumentException("subnet.env needs an IPv4 or an IPv6 network");
        }
        if (mtu <= 0) {
            throw new IllegalArgumentException("MTU must be positive, got " + mtu);
        }
    }

    /**
     * The file's text, upstream's lines in upstream's order. The subnet lines carry the first
     * address of the subnet ({@code 10.244.1.0/24} → {@code 10.244.1.1/24}), as upstream writes them.
     */
    public String render() {
        StringBuilder sb = new StringBuilder(160);
        if (network != null) {
            sb.append("FLANNEL_NETWORK=").append(network).append('\n');
            sb.append("FLANNEL_SUBNET=").append(Ip4Net.formatAddress(subnet.address() + 1))
                    .append('/').append(subnet.prefixLength()).append('\n');
        }
        if (ipv6Network != null) {
            long low = ipv6Subnet.low() + 1;
            long high = low == 0 ? ipv6Subnet.high() + 1 : ipv6Subnet.high();
            sb.append("FLANNEL_IPV6_NETWORK=").append(ipv6Network).append('\n');
            sb.append("FLANNEL_IPV6_SUBNET=").append(Ip6Net.formatAddress(high, low))
                    .append('/').append(ipv6Subnet.prefixLength()).append('\n');
        }
        sb.append("FLANNEL_MTU=").append(mtu).append('\n');
        sb.append("FLANNEL_IPMASQ=").append(ipMasq).append('\n');
        return sb.toString();
    }

    /** Writes {@link #render()} atomically; file mode 0644 and new directories 0755 whatever the umask. */
    public void write(Path path) throws IOException {
        AtomicFile.write(path, render().getBytes(StandardCharsets.UTF_8), "rw-r--r--", "rwxr-xr-x");
    }

    /**
     * What a previous run left in subnet.env, per family, as upstream's {@code ReadCIDRFromSubnetFile}
     * reads it: each value reduced to its network ({@code 10.244.1.1/24} → {@code 10.244.1.0/24});
     * null where the key is missing, holds more than one comma-separated entry or does not parse.
     */
    public record Previous(Ip4Net network, Ip4Net subnet, Ip6Net ipv6Network, Ip6Net ipv6Subnet) {
        public static final Previous EMPTY = new Previous(null, null, null, null);
    }

    /** Reads the previous file; a missing or unreadable file gives {@link Previous#EMPTY}. Never throws. */
    public static Previous readPrevious(Path path) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(path);
        } catch (NoSuchFileException e) {
            return Previous.EMPTY;
        } catch (IOException e) {
            LOG.warn("subnet.env previous file unreadable path={} error={}", path, e.toString());
            return Previous.EMPTY;
        }
        return parsePrevious(new String(bytes, StandardCharsets.UTF_8), path.toString());
    }

    /** As {@link #readPrevious(Path)}, from the file's text. Never throws. */
    public static Previous parsePrevious(String content) {
        return parsePrevious(content, "subnet.env");
    }

    private static Previous parsePrevious(String content, String source) {
        Optional<Map<String, String>> values = DotEnv.parse(content);
        if (values.isEmpty()) {
            LOG.warn("subnet.env previous file is not valid dotenv, ignored path={}", source);
            return Previous.EMPTY;
        }
        Map<String, String> v = values.get();
        return new Previous(
                single(v, "FLANNEL_NETWORK", Ip4Net::parse, source),
                single(v, "FLANNEL_SUBNET", Ip4Net::parse, source),
                single(v, "FLANNEL_IPV6_NETWORK", Ip6Net::parse, source),
                single(v, "FLANNEL_IPV6_SUBNET", Ip6Net::parse, source));
    }

    private static <T> T single(Map<String, String> values, String key, Function<String, T> parser, String source) {
        String value = values.get(key);
        if (value == null) {
            return null;
        }
        if (value.indexOf(',') >= 0) {
            LOG.warn("subnet.env previous value has more than one entry, ignored path={} key={} value={}", source, key, value);
            return null;
        }
        try {
            return parser.apply(value);
        } catch (IllegalArgumentException e) {
            LOG.warn("subnet.env previous value unparsable, ignored path={} key={} error={}", source, key, e.getMessage());
            return null;
        }
    }
}
