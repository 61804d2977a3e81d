package org.jflannel.flanneld.config;

import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The flags of upstream flanneld (REFERENCE §1) as picocli sees them. {@link FlagParser} hands
 * picocli only canonical {@code --name=value} tokens (it implements Go's flag syntax itself), so
 * every option here is a plain {@code --name} option taking one value.
 */
@Command(name = "flanneld", sortOptions = false, usageHelpWidth = 110, showDefaultValues = true,
        headerHeading = "Usage: flanneld [OPTION]...%n",
        synopsisHeading = "", customSynopsis = "",
        description = {"Flags may start with - or --; values follow as --name=value or --name value; "
                + "booleans as --name or --name=false.",
                "Every flag may also be given as FLANNELD_<NAME> (upper case, - as _); the command line wins."},
        optionListHeading = "%nOptions:%n")
final class FlagSpec {
    static final String BOOL = "0..1";

    @Option(names = "--etcd-endpoints", defaultValue = "http://127.0.0.1:4001,http://127.0.0.1:2379",
            description = "a comma-delimited list of etcd endpoints")
    String etcdEndpoints;
    @Option(names = "--etcd-prefix", defaultValue = "/coreos.com/network", description = "etcd prefix")
    String etcdPrefix;
    @Option(names = "--etcd-keyfile", defaultValue = "", description = "SSL key file used to secure etcd communication")
    String etcdKeyfile;
    @Option(names = "--etcd-certfile", defaultValue = "", description = "SSL certification file used to secure etcd communication")
    String etcdCertfile;
    @Option(names = "--etcd-cafile", defaultValue = "", description = "SSL Certificate Authority file used to secure etcd communication")
    String etcdCafile;
    @Option(names = "--etcd-username", defaultValue = "", description = "username for BasicAuth to etcd")
    String etcdUsername;
    @Option(names = "--etcd-password", defaultValue = "", description = "password for BasicAuth to etcd")
    String etcdPassword;
    @Option(names = "--iface", description = "interface to use (IP or name) for inter-host communication; "
            + "repeatable, checked in order, the first match wins")
    List<String> iface = new ArrayList<>();
    @Option(names = "--iface-regex", description = "regex matching the interface (IP or name) to use; repeatable, "
            + "checked in order after --iface")
    List<String> ifaceRegex = new ArrayList<>();
    @Option(names = "--iface-can-reach", defaultValue = "",
            description = "use the interface of the route to this IP (as 'ip route get <ip>' shows it)")
    String ifaceCanReach;
    @Option(names = "--subnet-file", defaultValue = "/run/flannel/subnet.env",
            description = "filename where env variables (subnet, MTU, ... ) will be written to")
    String subnetFile;
    @Option(names = "--public-ip", defaultValue = "", description = "IP accessible by other nodes for inter-host communication")
    String publicIp;
    @Option(names = "--public-ipv6", defaultValue = "", description = "IPv6 accessible by other nodes for inter-host communication")
    String publicIpv6;
    @Option(names = "--subnet-lease-renew-margin", defaultValue = "60",
            description = "subnet lease renewal margin, in minutes, ranging from 1 to 1439")
    int subnetLeaseRenewMargin;
    @Option(names = "--ip-masq", arity = BOOL, defaultValue = "false",
            description = "setup IP masquerade rule for traffic destined outside of overlay network")
    boolean ipMasq;
    @Option(names = "--ip-masq-fully-random-disable", arity = BOOL, defaultValue = "false",
            description = "disable --random-fully on the MASQUERADE rules")
    boolean ipMasqFullyRandomDisable;
    @Option(names = "--kube-subnet-mgr", arity = BOOL, defaultValue = "false",
            description = "contact the Kubernetes API for subnet assignment instead of etcd")
    boolean kubeSubnetMgr;
    @Option(names = "--kube-api-url", defaultValue = "", description = "Kubernetes API server URL; empty = in-cluster")
    String kubeApiUrl;
    @Option(names = "--kube-annotation-prefix", defaultValue = "flannel.alpha.coreos.com",
            description = "Kubernetes annotation prefix; may contain a single slash, e.g. 'example.com/cni'")
    String kubeAnnotationPrefix;
    @Option(names = "--kubeconfig-file", defaultValue = "", description = "kubeconfig file location; empty = in-cluster")
    String kubeconfigFile;
    @Option(names = "--version", arity = BOOL, defaultValue = "false", description = "print version and exit")
    boolean version;
    @Option(names = "--healthz-ip", defaultValue = "0.0.0.0", description = "the IP address for the healthz server to listen on")
    String healthzIp;
    @Option(names = "--healthz-port", defaultValue = "0",
            description = "the port for the healthz server to listen on (0 to disable)")
    int healthzPort;
    @Option(names = "--iptables-resync", defaultValue = "5", description = "resync period for iptables rules, in seconds")
    int iptablesResync;
    @Option(names = "--iptables-forward-rules", arity = BOOL, defaultValue = "true",
            description = "add default accept rules to the FORWARD chain in iptables")
    boolean iptablesForwardRules;
    @Option(names = "--ip-blackhole-route", arity = BOOL, defaultValue = "false",
            description = "add a blackhole route covering the own lease subnet")
    boolean ipBlackholeRoute;
    @Option(names = "--net-config-path", defaultValue = "/etc/kube-flannel/net-conf.json",
            description = "path to the network configuration file (kube mode)")
    String netConfigPath;
    @Option(names = "--set-node-network-unavailable", arity = BOOL, defaultValue = "true",
            description = "set the node's NetworkUnavailable condition to False once the network is up (kube mode)")
    boolean setNodeNetworkUnavailable;
    @Option(names = "--peer-probe", arity = BOOL, defaultValue = "true",
            description = "Ours: probe every peer through the overlay and report reachability and cause (/peers, metrics)")
    boolean peerProbe;
    @Option(names = "--peer-probe-interval", defaultValue = "10",
            description = "Ours: seconds between two probe rounds to one peer (spread and jittered over all peers)")
    int peerProbeInterval;
    @Option(names = "--vxlan-reconcile-interval", defaultValue = "10",
            description = "Ours: seconds between full reconciles of the VXLAN entries; 0 turns the periodic reconcile off")
    int vxlanReconcileInterval;
    @Option(names = "--network-policy", arity = BOOL, defaultValue = "false",
            description = "Ours: enforce Kubernetes NetworkPolicy for this node's pods in nftables (needs the Kubernetes API)")
    boolean networkPolicy;
    @Option(names = "--network-policy-log-rate", defaultValue = "10",
            description = "Ours: with --network-policy, log denied connections (NFLOG group 19014), at most this many lines a second; 0 logs none")
    int networkPolicyLogRate;
    @Option(names = "--v", defaultValue = "0", description = "log verbosity: 0 info, 1+ debug, 5+ trace")
    int v;
    @Option(names = "--vmodule", defaultValue = "", description = "accepted for compatibility; has no effect")
    String vmodule;
    @Option(names = "--log_backtrace_at", defaultValue = "", description = "accepted for compatibility; has no effect")
    String logBacktraceAt;

    Options toOptions() {
        return new Options(etcdEndpoints, etcdPrefix, etcdKeyfile, etcdCertfile, etcdCafile, etcdUsername, etcdPassword,
                iface, ifaceRegex, ifaceCanReach, subnetFile, publicIp, publicIpv6, subnetLeaseRenewMargin,
                ipMasq, ipMasqFullyRandomDisable, kubeSubnetMgr, kubeApiUrl, kubeAnnotationPrefix, kubeconfigFile,
                healthzIp, healthzPort, iptablesResync, iptablesForwardRules, ipBlackholeRoute, netConfigPath,
                setNodeNetworkUnavailable, v, vmodule, logBacktraceAt, peerProbe, peerProbeInterval, vxlanReconcileInterval,
                networkPolicy, networkPolicyLogRate);
    }
}
