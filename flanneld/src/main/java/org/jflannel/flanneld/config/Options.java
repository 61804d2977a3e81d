package org.jflannel.flanneld.config;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** The daemon's settings after flags and FLANNELD_* variables (REFERENCE §1). */
public record Options(
        String etcdEndpoints, String etcdPrefix, String etcdKeyfile, String etcdCertfile, String etcdCafile,
        String etcdUsername, String etcdPassword,
        List<String> iface, List<String> ifaceRegex, String ifaceCanReach,
        String subnetFile, String publicIp, String publicIpv6, int subnetLeaseRenewMargin,
        boolean ipMasq, boolean ipMasqFullyRandomDisable,
        boolean kubeSubnetMgr, String kubeApiUrl, String kubeAnnotationPrefix, String kubeconfigFile,
        String healthzIp, int healthzPort, int iptablesResync, boolean iptablesForwardRules,
        boolean ipBlackholeRoute, String netConfigPath, boolean setNodeNetworkUnavailable,
        int verbosity, String vmodule, String logBacktraceAt,
        boolean peerProbe, int peerProbeInterval, int vxlanReconcileInterval,
        boolean networkPolicy, int networkPolicyLogRate) {

    public Options {
        iface = List.copyOf(iface);
        ifaceRegex = List.copyOf(ifaceRegex);
        Objects.requireNonNull(etcdPassword, "etcdPassword");
    }

    /** The defaults, as a run without flags or variables gets them. */
    public static Options defaults() {
        return ((FlagParser.Outcome.Run) FlagParser.parse(List.of(), java.util.Map.of())).options();
    }

    /** REFERENCE §1/§9.3: the renew margin must be 0 < x < 1440 minutes. */
    public Optional<String> validationError() {
        if (subnetLeaseRenewMargin >= 24 * 60 || subnetLeaseRenewMargin <= 0) {
            return Optional.of("Invalid subnet-lease-renew-margin option, out of acceptable range");
        }
        if (peerProbeInterval < 1 || peerProbeInterval > 3600) {
            return Optional.of("Invalid peer-probe-interval option: expected 1..3600 seconds, got " + peerProbeInterval);
        }
        if (networkPolicyLogRate < 0 || networkPolicyLogRate > 10_000) {
            return Optional.of("Invalid network-policy-log-rate option: expected 0..10000 lines a second, got " + networkPolicyLogRate);
        }
        if (vxlanReconcileInterval < 0) {
            return Optional.of("Invalid vxlan-reconcile-interval option: expected >= 0 seconds, got " + vxlanReconcileInterval);
        }
        return Optional.empty();
    }

    /**
     * The {@code CLI flags config: ...} log line's body, upstream's {@code %+v} shape, with the etcd
     * password masked (a secret never reaches a log).
     */
    public String toLogString() {
        return "{etcdEndpoints:" + etcdEndpoints + " etcdPrefix:" + etcdPrefix + " etcdKeyfile:" + etcdKeyfile
                + " etcdCertfile:" + etcdCertfile + " etcdCAFile:" + etcdCafile + " etcdUsername:" + etcdUsername
                + " etcdPassword:" + (etcdPassword.isEmpty() ? "" : "********")
                + " kubeSubnetMgr:" + kubeSubnetMgr + " kubeApiUrl:" + kubeApiUrl
                + " kubeAnnotationPrefix:" + kubeAnnotationPrefix + " kubeConfigFile:" + kubeconfigFile
                + " iface:" + goList(iface) + " ifaceRegex:" + goList(ifaceRegex) + " ipMasq:" + ipMasq
                + " ifaceCanReach:" + ifaceCanReach + " subnetFile:" + subnetFile + " publicIP:" + publicIp
                + " publicIPv6:" + publicIpv6 + " subnetLeaseRenewMargin:" + subnetLeaseRenewMargin
                + " healthzIP:" + healthzIp + " healthzPort:" + healthzPort
                + " iptablesResyncSeconds:" + iptablesResync + " iptablesForwardRules:" + iptablesForwardRules
                + " netConfPath:" + netConfigPath + " setNodeNetworkUnavailable:" + setNodeNetworkUnavailable
                + " ipMasqRandomFullyDisable:" + ipMasqFullyRandomDisable + " blackholeRoute:" + ipBlackholeRoute
                + " v:" + verbosity + "}";
    }

    private static String goList(List<String> values) {
        return "[" + String.join(" ", values) + "]";
    }
}
