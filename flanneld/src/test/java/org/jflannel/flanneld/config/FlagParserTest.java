package org.jflannel.flanneld.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class FlagParserTest {

    @Test
    void noFlagsNoVariablesGivesUpstreamDefaults() {
        Options o = run("", Map.of());
        assertThat(o.etcdEndpoints()).isEqualTo("http://127.0.0.1:4001,http://127.0.0.1:2379");
        assertThat(o.etcdPrefix()).isEqualTo("/coreos.com/network");
        assertThat(o.etcdKeyfile()).isEmpty();
        assertThat(o.etcdPassword()).isEmpty();
        assertThat(o.iface()).isEmpty();
        assertThat(o.ifaceRegex()).isEmpty();
        assertThat(o.subnetFile()).isEqualTo("/run/flannel/subnet.env");
        assertThat(o.subnetLeaseRenewMargin()).isEqualTo(60);
        assertThat(o.ipMasq()).isFalse();
        assertThat(o.ipMasqFullyRandomDisable()).isFalse();
        assertThat(o.kubeSubnetMgr()).isFalse();
        assertThat(o.kubeAnnotationPrefix()).isEqualTo("flannel.alpha.coreos.com");
        assertThat(o.healthzIp()).isEqualTo("0.0.0.0");
        assertThat(o.healthzPort()).isZero();
        assertThat(o.iptablesResync()).isEqualTo(5);
        assertThat(o.iptablesForwardRules()).isTrue();
        assertThat(o.ipBlackholeRoute()).isFalse();
        assertThat(o.netConfigPath()).isEqualTo("/etc/kube-flannel/net-conf.json");
        assertThat(o.setNodeNetworkUnavailable()).isTrue();
        assertThat(o.verbosity()).isZero();
        assertThat(o).isEqualTo(Options.defaults());
    }

    static Stream<Arguments> precedence() {
        return Stream.of(
                // args, env, accessor, expected
                Arguments.of("-ip-masq", Map.of(), f(Options::ipMasq), true),
                Arguments.of("--ip-masq", Map.of(), f(Options::ipMasq), true),
                Arguments.of("--ip-masq=false", Map.of("FLANNELD_IP_MASQ", "true"), f(Options::ipMasq), false),
                Arguments.of("", Map.of("FLANNELD_IP_MASQ", "true"), f(Options::ipMasq), true),
                Arguments.of("", Map.of("FLANNELD_IP_MASQ", "1"), f(Options::ipMasq), true),
                Arguments.of("-ip-masq=T", Map.of(), f(Options::ipMasq), true),
                Arguments.of("--iptables-forward-rules=false", Map.of(), f(Options::iptablesForwardRules), false),
                Arguments.of("", Map.of("FLANNELD_IPTABLES_FORWARD_RULES", "false"), f(Options::iptablesForwardRules), false),
                Arguments.of("", Map.of("FLANNELD_IPTABLES_FORWARD_RULES", ""), f(Options::iptablesForwardRules), true),
                Arguments.of("--healthz-port 8080", Map.of(), f(Options::healthzPort), 8080),
                Arguments.of("-healthz-port=8080", Map.of("FLANNELD_HEALTHZ_PORT", "9090"), f(Options::healthzPort), 8080),
                Arguments.of("", Map.of("FLANNELD_HEALTHZ_PORT", "9090"), f(Options::healthzPort), 9090),
                Arguments.of("--healthz-port=0x1F90", Map.of(), f(Options::healthzPort), 8080),
                Arguments.of("--healthz-port=010", Map.of(), f(Options::healthzPort), 8),
                Arguments.of("--healthz-port=8_080", Map.of(), f(Options::healthzPort), 8080),
                Arguments.of("--iface eth0 --iface=10.0.0.1 -iface eth2", Map.of("FLANNELD_IFACE", "eth9"),
                        f(Options::iface), List.of("eth0", "10.0.0.1", "eth2")),
                Arguments.of("", Map.of("FLANNELD_IFACE", "eth9,eth8"), f(Options::iface), List.of("eth9,eth8")),
                Arguments.of("", Map.of("FLANNELD_IFACE_REGEX", "^en.*"), f(Options::ifaceRegex), List.of("^en.*")),
                Arguments.of("--iface-regex=^en --iface-regex ^eth", Map.of(), f(Options::ifaceRegex), List.of("^en", "^eth")),
                Arguments.of("--etcd-prefix=/a", Map.of("FLANNELD_ETCD_PREFIX", "/b"), f(Options::etcdPrefix), "/a"),
                Arguments.of("", Map.of("FLANNELD_ETCD_PREFIX", "/b"), f(Options::etcdPrefix), "/b"),
                Arguments.of("--public-ip -1.2.3.4", Map.of(), f(Options::publicIp), "-1.2.3.4"),
                Arguments.of("", Map.of("FLANNELD_KUBE_SUBNET_MGR", "true"), f(Options::kubeSubnetMgr), true),
                Arguments.of("", Map.of("FLANNELD_SUBNET_LEASE_RENEW_MARGIN", "30"), f(Options::subnetLeaseRenewMargin), 30),
                Arguments.of("-v=3", Map.of("FLANNELD_V", "5"), f(Options::verbosity), 3),
                Arguments.of("", Map.of("FLANNELD_V", "2"), f(Options::verbosity), 2),
                Arguments.of("", Map.of("FLANNELD_LOG_BACKTRACE_AT", "x.go:1"), f(Options::logBacktraceAt), "x.go:1"),
                Arguments.of("--net-config-path /tmp/n.json", Map.of(), f(Options::netConfigPath), "/tmp/n.json"),
                Arguments.of("", Map.of("FLANNELD_NET_CONFIG_PATH", "/e.json"), f(Options::netConfigPath), "/e.json"),
                Arguments.of("", Map.of("FLANNELD_VERSION", "true"), f(Options::ipMasq), false),
                Arguments.of("--ip-masq false --healthz-port=1", Map.of(), f(Options::healthzPort), 0),
                Arguments.of("-- --healthz-port=1", Map.of(), f(Options::healthzPort), 0),
                // a single-valued flag given twice: the last value wins (Go's flag package), also across syntaxes
                Arguments.of("--net-config-path a --net-config-path b", Map.of(), f(Options::netConfigPath), "b"),
                Arguments.of("-net-config-path=a --net-config-path b", Map.of("FLANNELD_NET_CONFIG_PATH", "c"),
                        f(Options::netConfigPath), "b"),
                Arguments.of("--healthz-port 1 -healthz-port=2", Map.of(), f(Options::healthzPort), 2),
                Arguments.of("--ip-masq --ip-masq=false", Map.of(), f(Options::ipMasq), false),
                Arguments.of("--ip-masq=false -ip-masq", Map.of(), f(Options::ipMasq), true),
                Arguments.of("--kube-subnet-mgr --kube-subnet-mgr", Map.of(), f(Options::kubeSubnetMgr), true),
                Arguments.of("--etcd-password x --etcd-password y", Map.of(), f(Options::etcdPassword), "y"),
                Arguments.of("--iface-can-reach 10.0.0.1 --iface-can-reach=", Map.of(), f(Options::ifaceCanReach), ""),
                // values picocli could read as syntax of its own reach it verbatim
                Arguments.of("--etcd-prefix=@/tmp/args", Map.of(), f(Options::etcdPrefix), "@/tmp/args"),
                Arguments.of("--etcd-prefix --ip-masq", Map.of(), f(Options::etcdPrefix), "--ip-masq"),
                Arguments.of("--etcd-prefix=--version", Map.of(), f(Options::etcdPrefix), "--version"),
                Arguments.of("--etcd-prefix --", Map.of(), f(Options::etcdPrefix), "--"),
                Arguments.of("--etcd-prefix=a=b", Map.of(), f(Options::etcdPrefix), "a=b"),
                Arguments.of("--iface a --iface a", Map.of(), f(Options::iface), List.of("a", "a")));
    }

    @ParameterizedTest(name = "[{index}] {0} {1}")
    @MethodSource("precedence")
    void flagsWinOverVariablesAndVariablesOverDefaults(String args, Map<String, String> env,
            Function<Options, Object> field, Object expected) {
        assertThat(field.apply(run(args, env))).isEqualTo(expected);
    }

    static Stream<Arguments> errors() {
        return Stream.of(
                Arguments.of("--no-such-flag", Map.of(), "flag provided but not defined: -no-such-flag"),
                Arguments.of("-x=1", Map.of(), "flag provided but not defined: -x"),
                Arguments.of("---ip-masq", Map.of(), "bad flag syntax: ---ip-masq"),
                Arguments.of("-=x", Map.of(), "bad flag syntax: -=x"),
                Arguments.of("--healthz-port", Map.of(), "flag needs an argument: -healthz-port"),
                Arguments.of("--healthz-port=abc", Map.of(), "invalid value \"abc\" for flag -healthz-port: parse error"),
                Arguments.of("--healthz-port=99999999999", Map.of(),
                        "invalid value \"99999999999\" for flag -healthz-port: value out of range"),
                Arguments.of("--iptables-resync=1__0", Map.of(), "invalid value \"1__0\" for flag -iptables-resync: parse error"),
                Arguments.of("--ip-masq=yes", Map.of(), "invalid boolean value \"yes\" for -ip-masq: parse error"),
                Arguments.of("--ip-masq=", Map.of(), "invalid boolean value \"\" for -ip-masq: parse error"),
                Arguments.of("", Map.of("FLANNELD_HEALTHZ_PORT", "x"), "invalid value \"x\" for FLANNELD_HEALTHZ_PORT: parse error"),
                Arguments.of("", Map.of("FLANNELD_IP_MASQ", "yes"), "invalid value \"yes\" for FLANNELD_IP_MASQ: parse error"));
    }

    @ParameterizedTest(name = "[{index}] {0} {1}")
    @MethodSource("errors")
    void badFlagOrVariableIsAFailureWithGoMessage(String args, Map<String, String> env, String message) {
        assertThat(FlagParser.parse(split(args), env)).isEqualTo(new FlagParser.Outcome.Failure(message));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("oddCommandLines")
    void noCommandLineEscapesAsAnException(String args) {
        assertThat(FlagParser.parse(split(args), Map.of())).isNotNull();
    }

    static Stream<String> oddCommandLines() {
        return Stream.of("--version --version", "--version=false --version", "-h --h", "--v=3 --v=4 --v 5",
                "--healthz-port=1 --healthz-port=x", "--vmodule a --vmodule b --log_backtrace_at c --log_backtrace_at d",
                "@/nonexistent", "--iface @/nonexistent", "--subnet-file= --subnet-file", "-", "--ip-masq=true=true");
    }

    @Test
    void badVariableForAFlagSetOnTheCommandLineIsNotLookedAt() {
        assertThat(run("--healthz-port=1", Map.of("FLANNELD_HEALTHZ_PORT", "x")).healthzPort()).isEqualTo(1);
    }

    @Test
    void versionOnTheCommandLinePrintsVersionButTheVariableDoesNothing() {
        assertThat(FlagParser.parse(List.of("--version"), Map.of())).isInstanceOf(FlagParser.Outcome.Version.class);
        assertThat(FlagParser.parse(List.of("-version"), Map.of("FLANNELD_HEALTHZ_PORT", "x")))
                .isInstanceOf(FlagParser.Outcome.Version.class);
        assertThat(FlagParser.parse(List.of(), Map.of("FLANNELD_VERSION", "true"))).isInstanceOf(FlagParser.Outcome.Run.class);
        assertThat(((FlagParser.Outcome.Version) FlagParser.parse(List.of("--version"), Map.of())).version()).startsWith("v");
    }

    @ParameterizedTest
    @MethodSource("helpFlags")
    void helpListsEveryFlag(String flag) {
        FlagParser.Outcome outcome = FlagParser.parse(List.of(flag), Map.of());
        assertThat(outcome).isInstanceOf(FlagParser.Outcome.Help.class);
        String text = ((FlagParser.Outcome.Help) outcome).text();
        assertThat(text).contains("--etcd-endpoints", "--iface-regex", "--subnet-lease-renew-margin", "--healthz-port",
                "--ip-blackhole-route", "--set-node-network-unavailable", "--kubeconfig-file", "--vmodule",
                "http://127.0.0.1:4001,http://127.0.0.1:2379");
    }

    static Stream<String> helpFlags() {
        return Stream.of("-h", "--help", "-help", "--h");
    }

    @Test
    void argumentsAfterTheFirstNonFlagAreIgnoredAsGoDoes() {
        FlagParser.Outcome.Run r = (FlagParser.Outcome.Run) FlagParser.parse(List.of("--ip-masq", "stray", "--nope"), Map.of());
        assertThat(r.options().ipMasq()).isTrue();
        assertThat(r.ignoredArgs()).containsExactly("stray", "--nope");
    }

    @ParameterizedTest
    @MethodSource("margins")
    void renewMarginMustBeBetweenZeroAndADayExclusive(int margin, boolean valid) {
        Options o = run("--subnet-lease-renew-margin=" + margin, Map.of());
        assertThat(o.validationError().isEmpty()).isEqualTo(valid);
        if (!valid) {
            assertThat(o.validationError()).contains("Invalid subnet-lease-renew-margin option, out of acceptable range");
        }
    }

    static Stream<Arguments> margins() {
        return Stream.of(Arguments.of(0, false), Arguments.of(1, true), Arguments.of(1439, true),
                Arguments.of(1440, false), Arguments.of(-5, false));
    }

    @Test
    void logLineMasksTheEtcdPassword() {
        Options o = run("--etcd-password=s3cret --etcd-username=bob", Map.of());
        assertThat(o.toLogString()).contains("etcdUsername:bob", "etcdPassword:********").doesNotContain("s3cret");
        assertThat(run("", Map.of("FLANNELD_ETCD_PASSWORD", "envsecret")).toLogString()).doesNotContain("envsecret");
    }

    @Test
    void envNameMapsDashesToUnderscores() {
        assertThat(FlagParser.envName("kube-subnet-mgr")).isEqualTo("FLANNELD_KUBE_SUBNET_MGR");
        assertThat(FlagParser.envName("log_backtrace_at")).isEqualTo("FLANNELD_LOG_BACKTRACE_AT");
    }

    private static Options run(String args, Map<String, String> env) {
        FlagParser.Outcome outcome = FlagParser.parse(split(args), new HashMap<>(env));
        assertThat(outcome).isInstanceOf(FlagParser.Outcome.Run.class);
        return ((FlagParser.Outcome.Run) outcome).options();
    }

    private static List<String> split(String args) {
        return args.isBlank() ? List.of() : Arrays.asList(args.trim().split(" +"));
    }

    private static Function<Options, Object> f(Function<Options, Object> f) {
        return f;
    }
}
