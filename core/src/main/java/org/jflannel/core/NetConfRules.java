package org.jflannel.core;

/**
 * Upstream's {@code CheckNetworkConfig} (REFERENCE §2): defaults for SubnetLen/Min/Max and their
 * checks, with upstream's exact messages. In kube mode only Network/IPv6Network are required and
 * the allocation fields are kept as given (the node's podCIDR is the subnet).
 */
final class NetConfRules {

    /** The fields as read, before defaults: null / 0 mean "not given". */
    record Raw(boolean v4, boolean v6,
               Ip4Net network, int subnetLen, Integer subnetMin, Integer subnetMax,
               Ip6Net ipv6Network, int ipv6SubnetLen, long[] ipv6SubnetMin, long[] ipv6SubnetMax) {
    }

    private NetConfRules() {
    }

    static NetConf apply(Raw r, NetConf.Mode mode, boolean nft, BackendConfig backend, boolean defaulted, String source)
            throws ConfigException {
        Ip4Net network = null;
        int subnetLen = 0;
        Ip4Net min = null;
        Ip4Net max = null;
        if (r.v4()) {
            network = r.network();
            if (network == null || (network.address() == 0 && network.prefixLength() == 0)) {
                throw error(source, "Network", "please define a correct Network parameter in the flannel config");
            }
            if (mode == NetConf.Mode.ETCD) {
                subnetLen = v4SubnetLen(network, r.subnetLen(), source);
                // upstream's order: both range checks first, then both alignment checks
                Integer givenMin = v4InRange(network, r.subnetMin(), "SubnetMin", source);
                Integer givenMax = v4InRange(network, r.subnetMax(), "SubnetMax", source);
                min = v4Bound(network, subnetLen, givenMin, true, source);
                max = v4Bound(network, subnetLen, givenMax, false, source);
            } else {
                subnetLen = r.subnetLen();
            }
        }
        Ip6Net network6 = null;
        int subnetLen6 = 0;
        Ip6Net min6 = null;
        Ip6Net max6 = null;
        if (r.v6()) {
            network6 = r.ipv6Network();
            if (network6 == null || (network6.high() == 0 && network6.low() == 0 && network6.prefixLength() == 0)) {
                throw error(source, "IPv6Network", "please define a correct IPv6Network parameter in the flannel config");
            }
            if (mode == NetConf.Mode.ETCD) {
                subnetLen6 = v6SubnetLen(network6, r.ipv6SubnetLen(), source);
                long[] givenMin = v6InRange(network6, r.ipv6SubnetMin(), "IPv6SubnetMin", source);
                long[] givenMax = v6InRange(network6, r.ipv6SubnetMax(), "IPv6SubnetMax", source);
                min6 = v6Bound(network6, subnetLen6, givenMin, true, source);
                max6 = v6Bound(network6, subnetLen6, givenMax, false, source);
            } else {
                subnetLen6 = r.ipv6SubnetLen();
            }
        }
        return new NetConf(r.v4(), r.v6(), network, subnetLen, min, max, network6, subnetLen6, min6, max6,
                nft, backend, defaulted);
    }

    private static int v4SubnetLen(Ip4Net network, int given, String source) throws ConfigException {
        int prefix = network.prefixLength();
        if (given > 0) {
            if (given > 30) {
                throw error(source, "SubnetLen", "SubnetLen must be less than /31");
            }
            if (given < prefix + 2) {
                throw error(source, "SubnetLen", "network must be able to accommodate at least four subnets");
            }
            return given;
        }
        if (prefix > 28) {
            throw error(source, "Network", "network is too small. Minimum useful network prefix is /28");
        }
        return prefix <= 22 ? 24 : prefix + 2;
    }

    private static Ip4Net v4Bound(Ip4Net network, int subnetLen, Integer given, boolean isMin, String source)
            throws ConfigException {
        String field = isMin ? "SubnetMin" : "SubnetMax";
        if (given == null || given == 0) {
            // upstream: Min = Network.IP + subnetSize (the first subnet is skipped); Max = the last subnet
            long count = 1L << (subnetLen - network.prefixLength());
            return network.subnet(subnetLen, isMin ? 1 : count - 1);
        }
        if ((given & ~Ip4Net.mask(subnetLen)) != 0) {
            throw error(source, field, field + " is not on a SubnetLen boundary: " + Ip4Net.formatAddress(given));
        }
        return new Ip4Net(given, subnetLen);
    }

    /** The explicit bound if given ("0.0.0.0" counts as not given), after upstream's range check. */
    private static Integer v4InRange(Ip4Net network, Integer given, String field, String source) throws ConfigException {
        if (given == null || given == 0) {
            return null;
        }
        if (!network.contains(given)) {
            throw error(source, field, field + " is not in the range of the Network");
        }
        return given;
    }

    /** The explicit bound if given ("::" counts as not given), after upstream's range check. */
    private static long[] v6InRange(Ip6Net network, long[] given, String field, String source) throws ConfigException {
        if (given == null || (given[0] == 0 && given[1] == 0)) {
            return null;
        }
        if (!network.contains(given[0], given[1])) {
            throw error(source, field, field + " is not in the range of the IPv6Network");
        }
        return given;
    }

    private static int v6SubnetLen(Ip6Net network, int given, String source) throws ConfigException {
        int prefix = network.prefixLength();
        if (given > 0) {
            if (given > 126) {
                throw error(source, "IPv6SubnetLen", "SubnetLen must be less than /127");
            }
            if (given < prefix + 2) {
                throw error(source, "IPv6SubnetLen", "network must be able to accommodate at least four subnets");
            }
            return given;
        }
        if (prefix > 124) {
            throw error(source, "IPv6Network", "IPv6Network is too small. Minimum useful network prefix is /124");
        }
        return prefix <= 62 ? 64 : prefix + 2;
    }

    private static Ip6Net v6Bound(Ip6Net network, int subnetLen, long[] given, boolean isMin, String source)
            throws ConfigException {
        String field = isMin ? "IPv6SubnetMin" : "IPv6SubnetMax";
        if (given == null || (given[0] == 0 && given[1] == 0)) {
            if (isMin) {
                return network.subnet(subnetLen, 1);
            }
            // the last subnet: every host bit of the network set, then cut to subnetLen
            int p = network.prefixLength();
            return new Ip6Net(network.high() | ~Ip6Net.maskHigh(p), network.low() | ~Ip6Net.maskLow(p), subnetLen);
        }
        Ip6Net aligned = new Ip6Net(given[0], given[1], subnetLen);
        if (aligned.high() != given[0] || aligned.low() != given[1]) {
            throw error(source, field, field + " is not on a SubnetLen boundary: " + Ip6Net.formatAddress(given[0], given[1]));
        }
        return aligned;
    }

    private static ConfigException error(String source, String field, String message) {
        return new ConfigException(field, source + ": " + field + ": " + message);
    }
}
