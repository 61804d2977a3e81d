package org.jflannel.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SubnetEnvTest {

    @TempDir
    Path dir;

    private static final SubnetEnv V4 = new SubnetEnv(
            Ip4Net.parse("10.244.0.0/16"), Ip4Net.parse("10.244.1.0/24"), null, null, 1450, true);
    private static final SubnetEnv V6 = new SubnetEnv(
            null, null, Ip6Net.parse("2001:cafe:42::/56"), Ip6Net.parse("2001:cafe:42::/64"), 1450, true);
    private static final SubnetEnv DUAL = new SubnetEnv(
            Ip4Net.parse("10.42.0.0/16"), Ip4Net.parse("10.42.0.0/24"),
            Ip6Net.parse("2001:cafe:42::/56"), Ip6Net.parse("2001:cafe:42::/64"), 1450, true);

    static Stream<Arguments> referenceExamples() {
        return Stream.of(
                Arguments.of("IPv4 only", V4, """
                        FLANNEL_NETWORK=10.244.0.0/16
                        FLANNEL_SUBNET=10.244.1.1/24
                        FLANNEL_MTU=1450
                        FLANNEL_IPMASQ=true
                        """),
                Arguments.of("IPv6 only", V6, """
                        FLANNEL_IPV6_NETWORK=2001:cafe:42::/56
                        FLANNEL_IPV6_SUBNET=2001:cafe:42::1/64
                        FLANNEL_MTU=1450
                        FLANNEL_IPMASQ=true
                        """),
                Arguments.of("dual stack", DUAL, """
                        FLANNEL_NETWORK=10.42.0.0/16
                        FLANNEL_SUBNET=10.42.0.1/24
                        FLANNEL_IPV6_NETWORK=2001:cafe:42::/56
                        FLANNEL_IPV6_SUBNET=2001:cafe:42::1/64
                        FLANNEL_MTU=1450
                        FLANNEL_IPMASQ=true
                        """));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("referenceExamples")
    void writesReferenceExamplesByteForByte(String name, SubnetEnv env, String expected) throws Exception {
        Path file = dir.resolve("subnet.env");
        env.write(file);
        assertThat(Files.readAllBytes(file)).isEqualTo(expected.getBytes(StandardCharsets.US_ASCII));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("referenceExamples")
    void roundTripsThroughThePreviousReader(String name, SubnetEnv env, String expected) throws Exception {
        Path file = dir.resolve("run/flannel/subnet.env");
        env.write(file);
        SubnetEnv.Previous p = SubnetEnv.readPrevious(file);
        assertThat(p).isEqualTo(new SubnetEnv.Previous(env.network(), env.subnet(), env.ipv6Network(), env.ipv6Subnet()));
    }

    @Test
    void ipMasqFalseAndOtherMtu() {
        var env = new SubnetEnv(Ip4Net.parse("10.0.0.0/8"), Ip4Net.parse("10.7.16.0/20"), null, null, 8951, false);
        assertThat(env.render()).isEqualTo("FLANNEL_NETWORK=10.0.0.0/8\nFLANNEL_SUBNET=10.7.16.1/20\nFLANNEL_MTU=8951\nFLANNEL_IPMASQ=false\n");
    }

    @Test
    void subnetLineIncrementsAcrossTheIpv6LowHalf() {
        var env = new SubnetEnv(null, null, Ip6Net.parse("fc00::/48"), Ip6Net.parse("fc00:0:0:7::/64"), 1280, false);
        assertThat(env.render()).contains("FLANNEL_IPV6_SUBNET=fc00:0:0:7::1/64\n");
    }

    @Test
    void invalidCombinationsAreRejected() {
        Ip4Net n = Ip4Net.parse("10.0.0.0/8");
        Ip6Net n6 = Ip6Net.parse("fc00::/48");
        assertThatThrownBy(() -> new SubnetEnv(n, null, null, null, 1450, true)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("IPv4 network and subnet go together, got network=10.0.0.0/8 subnet=null");
        assertThatThrownBy(() -> new SubnetEnv(null, null, n6, null, 1450, true)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("IPv6 network and subnet go together, got network=fc00::/48 subnet=null");
        assertThatThrownBy(() -> new SubnetEnv(null, null, null, null, 1450, true)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("subnet.env needs an IPv4 or an IPv6 network");
        assertThatThrownBy(() -> new SubnetEnv(n, n, null, null, 0, true)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("MTU must be positive, got 0");
    }

    // ---- atomicity and modes ----

    @Test
    void replacesAnExistingFileLeavesNoTempFileAndSetsMode0644() throws Exception {
        Path file = dir.resolve("subnet.env");
        Files.writeString(file, "old content that is much longer than the new one ............................................\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        V4.write(file);
        assertThat(Files.readString(file)).isEqualTo(V4.render());
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-r--r--");
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files).containsExactly(file);
        }
    }

    @Test
    void replacesViaRenameSoAnOpenReaderKeepsTheOldInode() throws Exception {
        Path file = dir.resolve("subnet.env");
        V6.write(file);
        Object before = Files.getAttribute(file, "unix:ino");
        V4.write(file);
        assertThat(Files.getAttribute(file, "unix:ino")).isNotEqualTo(before);
        assertThat(Files.readString(file)).isEqualTo(V4.render());
    }

    @Test
    void createsMissingParentDirectoriesWithMode0755() throws Exception {
        Path file = dir.resolve("run/flannel/subnet.env");
        V4.write(file);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("run")))).isEqualTo("rwxr-xr-x");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("run/flannel")))).isEqualTo("rwxr-xr-x");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-r--r--");
    }

    @Test
    void modesHoldUnderUmask077() throws Exception {
        Path file = dir.resolve("run/flannel/subnet.env");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder("/bin/sh", "-c", "umask 077 && exec \"$0\" -cp \"$1\" " + SubnetEnvWriteMain.class.getName() + " \"$2\"",
                java, System.getProperty("java.class.path"), file.toString())
                .redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(output).isZero();
        assertThat(Files.readString(file)).isEqualTo(V4.render());
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-r--r--");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file.getParent()))).isEqualTo("rwxr-xr-x");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("run")))).isEqualTo("rwxr-xr-x");
    }

    @Test
    void existingDirectoryModeIsLeftAlone() throws Exception {
        Path sub = Files.createDirectory(dir.resolve("private"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        V4.write(sub.resolve("subnet.env"));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(sub))).isEqualTo("rwx------");
    }

    @Test
    void failedWriteLeavesTheOldFileAndNoTempFile() throws Exception {
        Path target = dir.resolve("subnet.env");
        Files.createDirectory(target); // a directory where the file should go: rename(2) fails
        Files.writeString(target.resolve("keep"), "x");
        assertThatThrownBy(() -> V4.write(target)).isInstanceOf(java.io.IOException.class);
        assertThat(target.resolve("keep")).hasContent("x");
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files).containsExactly(target);
        }
    }

    @Test
    void aFileInPlaceOfTheParentDirectoryFails() throws Exception {
        Files.writeString(dir.resolve("run"), "not a directory");
        assertThatThrownBy(() -> V4.write(dir.resolve("run/flannel/subnet.env"))).isInstanceOf(java.io.IOException.class);
    }

    // ---- reading the previous file ----

    @Test
    void missingOrUnreadableFileIsEmptyNotAnError() throws Exception {
        assertThat(SubnetEnv.readPrevious(dir.resolve("nope/subnet.env"))).isEqualTo(SubnetEnv.Previous.EMPTY);
        assertThat(SubnetEnv.readPrevious(dir)).isEqualTo(SubnetEnv.Previous.EMPTY); // a directory
    }

    static Stream<Arguments> previousFiles() {
        return Stream.of(
                prev("host bits are cleared", "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\n",
                        "10.244.0.0/16", "10.244.1.0/24", null, null),
                prev("two networks: network counts as empty", "FLANNEL_NETWORK=10.244.0.0/16,10.245.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\n"
                        + "FLANNEL_IPV6_NETWORK=fc00::/48,fd00::/48\nFLANNEL_IPV6_SUBNET=fc00:0:0:1::1/64\n",
                        null, "10.244.1.0/24", null, "fc00:0:0:1::/64"),
                prev("trailing comma is two entries", "FLANNEL_SUBNET=10.244.1.1/24,\n", null, null, null, null),
                prev("unparsable values count as empty", "FLANNEL_NETWORK=bogus\nFLANNEL_SUBNET=10.244.1.1\nFLANNEL_IPV6_NETWORK=10.0.0.0/8\n"
                        + "FLANNEL_IPV6_SUBNET=fc00::1/64\n", null, null, null, "fc00::/64"),
                prev("v6 in a v4 key counts as empty", "FLANNEL_SUBNET=fc00::1/64\n", null, null, null, null),
                prev("CRLF, comments, blank lines, export, spaces", "# written by flanneld\r\n\r\nexport FLANNEL_NETWORK=10.1.0.0/16\r\n"
                        + "  FLANNEL_SUBNET = 10.1.7.1/24   # mine\r\n", "10.1.0.0/16", "10.1.7.0/24", null, null),
                prev("quoted values", "FLANNEL_NETWORK=\"10.1.0.0/16\"\nFLANNEL_SUBNET='10.1.7.1/24'\n", "10.1.0.0/16", "10.1.7.0/24", null, null),
                prev("yaml-style separator", "FLANNEL_SUBNET: 10.1.7.1/24\nFLANNEL_IPV6_SUBNET: fc00::1/64\n", null, "10.1.7.0/24", null, "fc00::/64"),
                prev("a later line wins", "FLANNEL_SUBNET=10.1.7.1/24\nFLANNEL_SUBNET=10.1.8.1/24\n", null, "10.1.8.0/24", null, null),
                prev("a malformed line makes the whole file unreadable, as with godotenv",
                        "FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_SUBNET=10.1.7.1/24\nFLANNEL_MTU\n", null, null, null, null),
                prev("an unclosed quote makes the whole file unreadable", "FLANNEL_SUBNET=\"10.1.7.1/24\n", null, null, null, null),
                prev("other keys are ignored", "FLANNEL_MTU=abc\nFLANNEL_IPMASQ=maybe\nOTHER=1\nFLANNEL_SUBNET=10.1.7.1/24\n",
                        null, "10.1.7.0/24", null, null),
                prev("empty file", "", null, null, null, null),
                prev("empty values", "FLANNEL_NETWORK=\nFLANNEL_SUBNET=\n", null, null, null, null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("previousFiles")
    void previousValuesFollowUpstreamsRules(String name, String content, SubnetEnv.Previous expected) throws Exception {
        assertThat(SubnetEnv.parsePrevious(content)).isEqualTo(expected);
        Path file = dir.resolve("subnet.env");
        Files.writeString(file, content);
        assertThat(SubnetEnv.readPrevious(file)).isEqualTo(expected);
    }

    @Test
    void invalidUtf8IsReadNotThrown() throws Exception {
        Path file = dir.resolve("subnet.env");
        Files.write(file, new byte[] {'F', 'L', (byte) 0xff, '=', '1', '\n', 'F', 'L', 'A', 'N', 'N', 'E', 'L', '_', 'S', 'U', 'B', 'N', 'E', 'T',
                '=', '1', '0', '.', '0', '.', '0', '.', '1', '/', '8', (byte) 0xc3, '\n'});
        assertThat(SubnetEnv.readPrevious(file)).isEqualTo(SubnetEnv.Previous.EMPTY);
    }

    private static Arguments prev(String name, String content, String net, String subnet, String net6, String subnet6) {
        return Arguments.of(name, content, new SubnetEnv.Previous(
                net == null ? null : Ip4Net.parse(net), subnet == null ? null : Ip4Net.parse(subnet),
                net6 == null ? null : Ip6Net.parse(net6), subnet6 == null ? null : Ip6Net.parse(subnet6)));
    }
}
