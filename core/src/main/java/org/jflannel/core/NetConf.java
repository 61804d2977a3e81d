package org.jflannel.core;

import java.util.Objects;

/**
 * The cluster network configuration, net-conf.json (REFERENCE §2): parsed, validated and with its
 * defaults filled in. In kube mode the node's podCIDR is the subnet, so SubnetLen/Min/Max keep
 * the values given (0 / null when absent) and are not checked, as upstream does.
 *
 * @param ipv6SubnetLen     0 when IPv6 is off (or in kube mode when absent)
 * @param backend           the typed backend options
 * @param backendDefaulted  true when net-conf.json had no {@code Backend} and {@code udp} was assumed
 */
public record NetConf(
        boolean enableIPv4,
        boolean enableIPv6,
        Ip4Net network,
        int subnetLen,
        Ip4Net subnetMin,
        Ip4Net subnetMax,
        Ip6Net ipv6Network,
        int ipv6SubnetLen,
        Ip6Net ipv6SubnetMin,
        Ip6Net ipv6SubnetMax,
        boolean enableNFTables,
        BackendConfig backend,
        boolean backendDefaulted) {

    /** Where the configuration comes from: kube reads a file and validates less; etcd allocates. */
    public enum Mode { KUBE, ETCD }

    public NetConf {
        Objects.requireNonNull(backend, "backend");
        if (!enableIPv4 && !enableIPv6) {
            throw new IllegalArgumentException("none defined stack");
        }
    }

    /** Parses and validates net-conf.json text; errors name {@code net-conf.json} and the field. */
    public static NetConf parse(String json, Mode mode) throws ConfigException {
        return NetConfParser.parse(json, mode, "net-conf.json");
    }

    /** As {@link #parse(String, Mode)}, naming {@code source} (a path or an etcd key) in errors. */
    public static NetConf parse(String json, Mode mode, String source) throws ConfigException {
        return NetConfParser.parse(json, mode, source);
    }

    /** Whether {@code subnet} can be allocated: inside Network, of SubnetLen, between SubnetMin and SubnetMax. */
    public boolean allocatable(Ip4Net subnet) {
        return network != null && subnetMin != null && subnetMax != null
                && subnet.prefixLength() == subnetLen
                && network.contains(subnet)
                && subnet.compareTo(subnetMin) >= 0 && subnet.compareTo(subnetMax) <= 0;
    }

    /** Whether {@code subnet} can be allocated in the IPv6 network. */
    public boolean allocatable(Ip6Net subnet) {
        return ipv6Network != null && ipv6SubnetMin != null && ipv6SubnetMax != null
                && subnet.prefixLength() == ipv6SubnetLen
                && ipv6Network.contains(subnet)
                && subnet.compareTo(ipv6SubnetMin) >= 0 && subnet.compareTo(ipv6SubnetMax) <= 0;
    }
}
