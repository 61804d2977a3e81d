package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** ADD: delegate building (REFERENCE §11.3, §11.4, §11.9), scratch state (§11.5), rollback (Ours). */
class AddCommandTest {

    private static final String RESULT_031 = "{\"cniVersion\":\"0.3.1\",\"ips\":[{\"version\":\"4\",\"address\":\"10.1.17.2/24\"}]}";

    @TempDir
    Path dir;
    PluginHarness h;

    @BeforeEach
    void setUp() throws Exception {
        h = new PluginHarness(dir).subnetEnv(PluginHarness.V4_ENV).reply("ADD", RESULT_031);
    }

    private String delegateStdin() throws Exception {
        assertThat(h.calls()).isNotEmpty();
        return h.calls().get(0).stdin();
    }

    @Test
    void example1Ipv4DelegateBytesAreUpstreams() throws Exception {
        PluginHarness.Outcome o = h.run("ADD", h.config(""));
        assertThat(o.exit()).as(o.stdout()).isZero();
        String expected = "{\"ipMasq\":false,\"ipam\":{\"ranges\":[[{\"subnet\":\"10.1.17.0/24\"}]],\"routes\":[{\"dst\":\"10.1.0.0/16\"}],"
            + "\"type\":\"host-local\"},\"isGateway\":true,\"mtu\":1472,\"name\":\"cni-flannel\",\"type\":\"bridge\"}";
        assertThat(delegateStdin()).isEqualTo(expected);
        assertThat(Files.readString(h.scratch())).isEqualTo(expected);
    }

    @Test
    void example1DualStackAndTwoNetworks() throws Exception {
        h.subnetEnv("FLANNEL_NETWORK=10.1.0.0/16,192.168.0.0/16\nFLANNEL_SUBNET=10.1.17.1/24\nFLANNEL_IPV6_NETWORK=fc00::/48\n"
            + "FLANNEL_IPV6_SUBNET=fc00::1/64\nFLANNEL_MTU=1472\nFLANNEL_IPMASQ=true\n");
        assertThat(h.run("ADD", h.config("")).exit()).isZero();
        assertThat(delegateStdin()).contains("\"ranges\":[[{\"subnet\":\"10.1.17.0/24\"}],[{\"subnet\":\"fc00::/64\"}]],"
            + "\"routes\":[{\"dst\":\"10.1.0.0/16\"},{\"dst\":\"192.168.0.0/16\"},{\"dst\":\"fc00::/48\"}]");
    }

    @Test
    void example2KubeFlannelDelegateBytesAreUpstreams() throws Exception {
        h.subnetEnv(PluginHarness.KUBE_ENV);
        String stdin = "{\"cniVersion\":\"0.3.1\",\"delegate\":{\"hairpinMode\":true,\"isDefaultGateway\":true},\"name\":\"cbr0\","
            + "\"type\":\"flannel\",\"subnetFile\":\"" + h.subnetFile + "\",\"dataDir\":\"" + h.dataDir + "\"}";
        assertThat(h.run("ADD", stdin).exit()).isZero();
        String expected = "{\"cniVersion\":\"0.3.1\",\"hairpinMode\":true,\"ipMasq\":false,\"ipam\":{\"ranges\":[[{\"subnet\":\"10.244.1.0/24\"}]],"
            + "\"routes\":[{\"dst\":\"10.244.0.0/16\"}],\"type\":\"host-local\"},\"isDefaultGateway\":true,\"isGateway\":true,\"mtu\":1450,"
            + "\"name\":\"cbr0\",\"type\":\"bridge\"}";
        assertThat(delegateStdin()).isEqualTo(expected);
        assertThat(Files.readString(h.scratch())).isEqualTo(expected);
    }

    @Test
    void scratchFileExistsBeforeTheDelegateRunsWithPrivateModes() throws Exception {
        assertThat(h.run("ADD", h.config("")).exit()).isZero();
        assertThat(h.calls().get(0).scratchExisted()).isTrue();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(h.dataDir))).isEqualTo("rwx------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(h.scratch()))).isEqualTo("rw-------");
        try (var files = Files.list(h.dataDir)) {
            assertThat(files).containsExactly(h.scratch()); // no temporary file left behind
        }
    }

    @Test
    void secondAddOverwritesTheScratchFile() throws Exception {
        h.run("ADD", h.config(""));
        h.run("ADD", h.config("\"delegate\":{\"mtu\":1000}"));
        assertThat(Files.readString(h.scratch())).contains("\"mtu\":1000");
    }

    @Test
    void onlyDelegateKeysReachTheDelegate() throws Exception {
        h.run("ADD", h.config("\"hairpinMode\":true,\"dns\":{\"nameservers\":[\"1.1.1.1\"]},\"prevResult\":{},\"capabilities\":{\"portMappings\":true}"));
        assertThat(delegateStdin()).doesNotContain("hairpinMode", "dns", "prevResult", "capabilities");
    }

    @Test
    void userValuesForIpMasqAndMtuAndNonBridgeTypeAreKept() throws Exception {
        h.installFake("ptp");
        h.run("ADD", h.config("\"delegate\":{\"type\":\"ptp\",\"ipMasq\":true,\"mtu\":9000,\"other\":{\"b\":1,\"a\":[1.0,1e3]}}"));
        assertThat(delegateStdin()).isEqualTo("{\"ipMasq\":true,\"ipam\":{\"ranges\":[[{\"subnet\":\"10.1.17.0/24\"}]],"
            + "\"routes\":[{\"dst\":\"10.1.0.0/16\"}],\"type\":\"host-local\"},\"mtu\":9000,\"name\":\"cni-flannel\","
            + "\"other\":{\"a\":[1,1000],\"b\":1},\"type\":\"ptp\"}");
    }

    @Test
    void ipamKeysAreKeptRangesReplacedAndUserRoutesNormalisedInFieldOrder() throws Exception {
        h.run("ADD", h.config("\"ipam\":{\"type\":\"host-local\",\"dataDir\":\"/x\",\"ranges\":[[{\"subnet\":\"1.2.3.0/24\"}]],"
            + "\"routes\":[{\"scope\":0,\"advmss\":1360,\"mtu\":1400,\"dst\":\"10.96.0.1/12\",\"junk\":true},{\"dst\":\"FC00::1/64\",\"gw\":\"fc00::0001\"}]}"));
        assertThat(delegateStdin()).contains("\"ipam\":{\"dataDir\":\"/x\",\"ranges\":[[{\"subnet\":\"10.1.17.0/24\"}]],"
            + "\"routes\":[{\"dst\":\"10.96.0.1/12\",\"mtu\":1400,\"advmss\":1360,\"scope\":0},{\"dst\":\"fc00::1/64\",\"gw\":\"fc00::1\"},"
            + "{\"dst\":\"10.1.0.0/16\"}],\"type\":\"host-local\"}");
    }

    @Test
    void nullDelegateValuesCountAsPresentAsInGo() throws Exception {
        h.run("ADD", h.config("\"delegate\":{\"ipMasq\":null,\"mtu\":null,\"isGateway\":null},\"ipam\":{\"type\":null}"));
        assertThat(delegateStdin()).contains("\"ipMasq\":null", "\"mtu\":null", "\"isGateway\":null", "\"type\":null");
    }

    @Test
    void runtimeConfigOverwritesTheDelegatesOwn() throws Exception {
        h.run("ADD", h.config("\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":8080}]},\"delegate\":{\"runtimeConfig\":{\"x\":1}}"));
        assertThat(delegateStdin()).contains("\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":8080}]}");
    }

    @Test
    void goEncoderEscapesAndNumbers() throws Exception {
        h.run("ADD", h.config("\"delegate\":{\"s\":\"<a&b>\\u2028é\",\"big\":12345678901234567890,\"small\":0.0000001,\"huge\":1e21}"));
        assertThat(delegateStdin()).contains("\"big\":12345678901234567000", "\"huge\":1e+21", "\"s\":\"\\u003ca\\u0026b\\u003e\\u2028é\"",
            "\"small\":1e-7");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "\"delegate\":{\"type\":5}|'delegate' dictionary, if present, must have (string) 'type' field",
        "\"delegate\":{\"type\":null}|'delegate' dictionary, if present, must have (string) 'type' field",
        "\"delegate\":{\"name\":\"x\"}|'delegate' dictionary must not have 'name' field, it'll be set by flannel",
        "\"delegate\":{\"ipam\":{}}|'delegate' dictionary must not have 'ipam' field, it'll be set by flannel",
        "\"ipam\":{\"routes\":[{\"dst\":\"bogus\"}]}|failed to assemble Delegate IPAM: failed to read IPAM routes: failed to parse ipam.routes: invalid CIDR address: bogus",
        "\"ipam\":{\"routes\":[{\"dst\":\"1.2.3.0/24\",\"gw\":\"nope\"}]}|failed to assemble Delegate IPAM: failed to read IPAM routes: failed to parse ipam.routes: invalid IP address: nope",
        "\"ipam\":{\"routes\":[{\"dst\":\"1.2.3.0/24\",\"mtu\":1.5}]}|failed to assemble Delegate IPAM: failed to read IPAM routes: failed to parse ipam.routes: json: cannot unmarshal number 1.5 into Go struct field route.mtu of type int",
        "\"ipam\":{\"routes\":{}}|failed to assemble Delegate IPAM: failed to read IPAM routes: failed to parse ipam.routes: json: cannot unmarshal object into Go value of type []types.Route",
        "\"delegate\":\"bridge\"|failed to load flannel netconf file: failed to load netconf: json: cannot unmarshal string into Go struct field NetConf.delegate of type map[string]interface {}",
        "\"subnetFile\":5|failed to load flannel netconf file: failed to load netconf: json: cannot unmarshal number into Go struct field NetConf.subnetFile of type string"})
    void badDelegateOrIpamIsRefusedBeforeAnythingHappens(String extra, String msg) throws Exception {
        PluginHarness.Outcome o = h.run("ADD", h.config(extra));
        assertThat(o.stdout()).isEqualTo(PluginHarness.error("1.1.0", 999, msg, ""));
        assertThat(h.calls()).isEmpty();
        assertThat(h.scratch()).doesNotExist();
    }

    @Test
    void subnetEnvErrorsUseUpstreamsWrapperAndCode7ForMissingEquals() throws Exception {
        String stdin = h.config("");
        h.subnetEnv("");
        assertThat(h.run("ADD", stdin).stdout()).isEqualTo(PluginHarness.error("1.1.0", 999, "failed to load flannel 'subnet.env' file: "
            + h.subnetFile + " is missing FLANNEL_NETWORK, FLANNEL_IPV6_NETWORK, FLANNEL_SUBNET, FLANNEL_IPV6_SUBNET, FLANNEL_MTU, FLANNEL_IPMASQ."
            + " Check the flannel pod log for this node.", ""));
        h.subnetEnv("FLANNEL_SUBNET=bogus\n");
        assertThat(h.run("ADD", stdin).stdout()).isEqualTo(PluginHarness.error("1.1.0", 999,
            "failed to load flannel 'subnet.env' file: invalid CIDR address: bogus. Check the flannel pod log for this node.", ""));
        h.subnetEnv(PluginHarness.V4_ENV + "FLANNEL_MTU\n");
        assertThat(h.run("ADD", stdin).stdout()).isEqualTo(PluginHarness.error("1.1.0", 7, "failed to load flannel 'subnet.env' file: "
            + h.subnetFile + ": line 5: missing '=' in \"FLANNEL_MTU\". Check the flannel pod log for this node.", ""));
    }

    @Test
    void subnetFileDefaultsAndEmptyStringStaysEmpty() {
        FlannelNetConf defaults = decode("{\"name\":\"n\"}");
        assertThat(defaults.subnetFile()).isEqualTo("/run/flannel/subnet.env");
        assertThat(defaults.dataDir()).isEqualTo("/var/lib/cni/flannel");
        FlannelNetConf nulls = decode("{\"name\":\"n\",\"subnetFile\":null,\"dataDir\":null}");
        assertThat(nulls.subnetFile()).isEqualTo("/run/flannel/subnet.env");
        FlannelNetConf empty = decode("{\"name\":\"n\",\"subnetFile\":\"\",\"dataDir\":\"\"}");
        assertThat(empty.subnetFile()).isEmpty();
        assertThat(empty.dataDir()).isEmpty();
        PluginHarness.Outcome o = h.run("ADD", "{\"name\":\"n\",\"subnetFile\":\"\"}");
        assertThat(o.stdout()).isEqualTo(PluginHarness.error("1.1.0", 999,
            "failed to load flannel 'subnet.env' file: open : no such file or directory. Check the flannel pod log for this node.", ""));
    }

    @Test
    void emptyDataDirFailsLikeUpstreamsMkdirAll() {
        PluginHarness.Outcome o = h.run("ADD", "{\"name\":\"n\",\"subnetFile\":\"" + h.subnetFile + "\",\"dataDir\":\"\"}");
        assertThat(o.stdout()).isEqualTo(PluginHarness.error("1.1.0", 999, "mkdir : no such file or directory", ""));
    }

    private static FlannelNetConf decode(String json) {
        try {
            return FlannelNetConf.decode(json.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (CniException e) {
            throw new AssertionError(e.getMessage(), e);
        }
    }

    @Test
    void failedDelegateAddIsRolledBackAndItsErrorReturnedUnchanged() throws Exception {
        h.fail("ADD", 1, "{\"cniVersion\":\"0.3.1\",\"code\":11,\"msg\":\"try later\",\"details\":\"busy\"}", null);
        String stdin = h.config("\"cniVersion\":\"0.3.1\"");
        PluginHarness.Outcome o = h.run("ADD", stdin);
        assertThat(o.stdout()).isEqualTo(PluginHarness.error("0.3.1", 11, "try later", "busy"));
        assertThat(h.calls()).extracting(PluginHarness.Call::command).containsExactly("ADD", "DEL");
        assertThat(h.calls().get(1).stdin()).isEqualTo(h.calls().get(0).stdin());
        assertThat(h.scratch()).doesNotExist();
    }

    @Test
    void delegateFailureWithoutJsonGivesInvokesTexts() throws Exception {
        h.fail("ADD", 3, null, "boom\n");
        assertThat(h.run("ADD", h.config("")).stdout()).isEqualTo(PluginHarness.error("1.1.0", 0, "netplugin failed: \"boom\\n\"", ""));
        Files.delete(dir.resolve("stderr.ADD"));
        assertThat(h.run("ADD", h.config("")).stdout())
            .isEqualTo(PluginHarness.error("1.1.0", 0, "netplugin failed with no error message: exit status 3", ""));
        h.fail("ADD", 1, "oops", null);
        assertThat(h.run("ADD", h.config("")).stdout()).isEqualTo(PluginHarness.error("1.1.0", 0,
            "netplugin failed but error parsing its diagnostic message \"oops\": invalid character 'o' looking for beginning of value", ""));
        assertThat(h.scratch()).doesNotExist();
    }

    @Test
    void unwritableScratchFileFailsBeforeTheDelegateRuns() throws Exception {
        Files.writeString(h.dataDir, "a file where the data directory should be");
        PluginHarness.Outcome o = h.run("ADD", h.config(""));
        assertThat(o.stdout()).isEqualTo(PluginHarness.error("1.1.0", 999, "mkdir " + h.dataDir + ": not a directory", ""));
        assertThat(h.calls()).isEmpty(); // on the fast path the write and the delegate's run go in one frame
    }

    @Test
    void missingDelegateBinaryIsCode999AndLeavesNoScratchFile() throws Exception {
        PluginHarness.Outcome o = h.run("ADD", h.config("\"delegate\":{\"type\":\"nosuch\"}"));
        assertThat(o.stdout()).isEqualTo(PluginHarness.error("1.1.0", 999,
            "failed to delegate add: failed to find plugin \"nosuch\" in path [" + h.bin + "]", ""));
        assertThat(h.scratch()).doesNotExist();
    }

    @Test
    void unparsableResultFailsAndRollsBack() throws Exception {
        h.reply("ADD", "{\"cniVersion\":\"7.0.0\"}");
        assertThat(h.run("ADD", h.config("")).stdout()).isEqualTo(PluginHarness.error("1.1.0", 999,
            "failed to delegate add: unsupported CNI result version \"7.0.0\"", ""));
        assertThat(h.calls()).extracting(PluginHarness.Call::command).containsExactly("ADD", "DEL");
        assertThat(h.scratch()).doesNotExist();
    }

    @Test
    void delegateStderrIsPassedOnAndOneLineDescribesTheDelegateConfig() throws Exception {
        Files.writeString(dir.resolve("stderr.ADD"), "bridge says hi\n");
        PluginHarness.Outcome o = h.run("ADD", h.config(""));
        assertThat(o.stderr()).isEqualTo("delegateAdd: netconf sent to delegate plugin: " + delegateStdin() + "\nbridge says hi\n");
    }
}
