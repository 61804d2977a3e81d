package org.jflannel.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CniSubnetEnvTest {

    private static final String V4 = "FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_SUBNET=10.1.17.1/24\nFLANNEL_MTU=1472\nFLANNEL_IPMASQ=true\n";

    private static CniSubnetEnv parse(String content) throws ConfigException {
        return CniSubnetEnv.parse("/run/flannel/subnet.env", content);
    }

    @Test
    void ipv4FileGivesMaskedSubnetNetworkMtuAndMasq() throws Exception {
        CniSubnetEnv env = parse(V4);
        assertThat(env.networks()).containsExactly("10.1.0.0/16");
        assertThat(env.ipv6Networks()).isEmpty();
        assertThat(env.subnet()).isEqualTo("10.1.17.0/24");
        assertThat(env.ipv6Subnet()).isNull();
        assertThat(env.mtu()).isEqualTo(1472);
        assertThat(env.ipMasq()).isTrue();
    }

    @Test
    void dualStackMasksBothSubnets() throws Exception {
        CniSubnetEnv env = parse(V4 + "FLANNEL_IPV6_NETWORK=fc00::/48\nFLANNEL_IPV6_SUBNET=fc00::1/64\n");
        assertThat(env.ipv6Networks()).containsExactly("fc00::/48");
        assertThat(env.ipv6Subnet()).isEqualTo("fc00::/64");
    }

    @Test
    void networkListIsMaskedAndDeduplicatedInOrder() throws Exception {
        CniSubnetEnv env = parse("FLANNEL_NETWORK=10.1.2.3/16,192.168.0.0/16,10.1.0.0/16\nFLANNEL_SUBNET=10.1.17.1/24\nFLANNEL_MTU=1\nFLANNEL_IPMASQ=false\n");
        assertThat(env.networks()).containsExactly("10.1.0.0/16", "192.168.0.0/16");
    }

    @Test
    void repeatedNetworkLineReplacesTheEarlierList() throws Exception {
        CniSubnetEnv env = parse("FLANNEL_NETWORK=10.1.0.0/16,10.2.0.0/16\n" + V4.replace("10.1.0.0/16", "10.9.0.0/16"));
        assertThat(env.networks()).containsExactly("10.9.0.0/16");
    }

    @Test
    void crlfLinesAreAccepted() throws Exception {
        CniSubnetEnv env = parse(V4.replace("\n", "\r\n"));
        assertThat(env.ipMasq()).isTrue();
        assertThat(env.subnet()).isEqualTo("10.1.17.0/24");
    }

    @Test
    void lastLineWithoutNewlineCounts() throws Exception {
        assertThat(parse(V4.strip()).ipMasq()).isTrue();
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "true|true", "TRUE|false", "yes|false", "false|false", "' true'|false", "''|false"})
    void ipMasqIsTrueOnlyForExactlyTrue(String value, boolean expected) throws Exception {
        assertThat(parse(V4.replace("FLANNEL_IPMASQ=true", "FLANNEL_IPMASQ=" + value)).ipMasq()).isEqualTo(expected);
    }

    @ParameterizedTest(name = "ignored line: {0}")
    @CsvSource(delimiter = '|', value = {
        "export FLANNEL_MTU=9000", "' FLANNEL_MTU=9000'", "FLANNEL_MTU =9000", "flannel_mtu=9000", "# FLANNEL_MTU=9000", "OTHER"})
    void keysMatchExactlyAndOtherLinesAreIgnored(String line) throws Exception {
        assertThat(parse(line + "\n" + V4).mtu()).isEqualTo(1472);
    }

    @Test
    void familiesAreNotCrossChecked() throws Exception {
        CniSubnetEnv env = parse("FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_IPV6_SUBNET=fc00::1/64\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n");
        assertThat(env.subnet()).isNull();
        assertThat(env.ipv6Subnet()).isEqualTo("fc00::/64");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "FLANNEL_SUBNET=bogus|invalid CIDR address: bogus",
        "'FLANNEL_SUBNET=10.1.17.1/24 '|'invalid CIDR address: 10.1.17.1/24 '",
        "FLANNEL_NETWORK=10.1.0.0/16,|'invalid CIDR address: '",
        "FLANNEL_IPV6_SUBNET=fc00::1/129|invalid CIDR address: fc00::1/129",
        "FLANNEL_MTU=abc|strconv.ParseUint: parsing \"abc\": invalid syntax",
        "FLANNEL_MTU=-1|strconv.ParseUint: parsing \"-1\": invalid syntax",
        "FLANNEL_MTU=|strconv.ParseUint: parsing \"\": invalid syntax",
        "FLANNEL_MTU=4294967296|strconv.ParseUint: parsing \"4294967296\": value out of range"})
    void badValueFailsWithGoParserText(String line, String message) {
        assertThatThrownBy(() -> parse(V4 + line + "\n"))
            .isInstanceOf(ConfigException.class).isNotInstanceOf(CniSubnetEnv.MissingEqualsException.class)
            .hasMessage(message);
    }

    @Test
    void mtuAcceptsTheUint32Maximum() throws Exception {
        assertThat(parse(V4 + "FLANNEL_MTU=4294967295\n").mtu()).isEqualTo(4294967295L);
    }

    @ParameterizedTest(name = "[{index}] missing {1}")
    @CsvSource(delimiter = '|', value = {
        "''|FLANNEL_NETWORK, FLANNEL_IPV6_NETWORK, FLANNEL_SUBNET, FLANNEL_IPV6_SUBNET, FLANNEL_MTU, FLANNEL_IPMASQ",
        "FLANNEL_NETWORK=10.1.0.0/16|FLANNEL_SUBNET, FLANNEL_IPV6_SUBNET, FLANNEL_MTU, FLANNEL_IPMASQ",
        "FLANNEL_SUBNET=10.1.1.1/24\\nFLANNEL_MTU=1|FLANNEL_NETWORK, FLANNEL_IPV6_NETWORK, FLANNEL_IPMASQ",
        "FLANNEL_IPV6_NETWORK=fc00::/48\\nFLANNEL_IPV6_SUBNET=fc00::1/64\\nFLANNEL_IPMASQ=true|FLANNEL_MTU"})
    void missingItemsAreListedInUpstreamOrder(String content, String list) {
        assertThatThrownBy(() -> parse(content.replace("\\n", "\n")))
            .hasMessage("/run/flannel/subnet.env is missing " + list);
    }

    @Test
    void knownKeyWithoutEqualsIsAnInvalidConfigNamingLine() {
        assertThatThrownBy(() -> parse("FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_MTU\r\n"))
            .isInstanceOf(CniSubnetEnv.MissingEqualsException.class)
            .hasMessage("/run/flannel/subnet.env: line 2: missing '=' in \"FLANNEL_MTU\"");
    }

    @Test
    void unknownKeyWithoutEqualsIsIgnored() throws Exception {
        assertThat(parse("GARBAGE\n" + V4).mtu()).isEqualTo(1472);
    }

    @Test
    void readsFileAndReportsMissingFileAsGoDoes(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("subnet.env");
        Files.writeString(file, V4);
        assertThat(CniSubnetEnv.read(file.toString()).networks()).isEqualTo(List.of("10.1.0.0/16"));
        assertThatThrownBy(() -> CniSubnetEnv.read(dir.resolve("nope").toString()))
            .hasMessage("open " + dir.resolve("nope") + ": no such file or directory");
        assertThatThrownBy(() -> CniSubnetEnv.read("")).hasMessage("open : no such file or directory");
    }

    @Test
    void directoryIsReportedAsReadError(@TempDir Path dir) throws IOException {
        assertThatThrownBy(() -> CniSubnetEnv.read(dir.toString())).hasMessage("read " + dir + ": is a directory");
    }
}
