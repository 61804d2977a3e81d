package org.jflannel.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/** The previous-subnet.env reader never throws on content, whatever the file holds. */
class SubnetEnvPropertyTest {

    private static final List<String> KEYS = List.of("FLANNEL_NETWORK", "FLANNEL_SUBNET", "FLANNEL_IPV6_NETWORK",
            "FLANNEL_IPV6_SUBNET", "FLANNEL_MTU", "FLANNEL_IPMASQ", "flannel_subnet", "export FLANNEL_SUBNET", "", " ", "#");
    private static final List<String> SEPARATORS = List.of("=", ":", " = ", "=\"", "='", "", "==", "\t=\t");
    private static final List<String> ENDINGS = List.of("\n", "\r\n", "\r", "", "\"\n", "'\n", " # comment\n", "\n\n");

    private static Path dir;

    @BeforeContainer
    static void createDir() throws IOException {
        dir = Files.createTempDirectory("subnetenv-prop");
    }

    @AfterContainer
    static void removeDir() throws IOException {
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                Files.delete(p);
            }
        }
        Files.delete(dir);
    }

    @Property(tries = 100_000)
    void arbitraryStringsNeverThrow(@ForAll String content) {
        assertThat(SubnetEnv.parsePrevious(content)).isNotNull();
    }

    @Property(tries = 100_000)
    void arbitraryBytesNeverThrow(@ForAll("bytes") byte[] bytes) {
        // the same decoding readPrevious(Path) applies to the file's bytes
        assertThat(SubnetEnv.parsePrevious(new String(bytes, StandardCharsets.UTF_8))).isNotNull();
    }

    @Property(tries = 100_000)
    void dotenvShapedContentNeverThrows(@ForAll("dotenv") String content) {
        assertThat(SubnetEnv.parsePrevious(content)).isNotNull();
    }

    /** Through a real file too; fewer tries, as each one writes the file. */
    @Property(tries = 500)
    void arbitraryFilesNeverThrow(@ForAll("bytes") byte[] bytes) throws IOException {
        Path file = dir.resolve("subnet.env");
        Files.write(file, bytes);
        assertThat(SubnetEnv.readPrevious(file)).isEqualTo(SubnetEnv.parsePrevious(new String(bytes, StandardCharsets.UTF_8)));
    }

    @Property(tries = 2_000)
    void writtenFilesReadBackAsWritten(@ForAll("envs") SubnetEnv env) {
        SubnetEnv.Previous p = SubnetEnv.parsePrevious(env.render());
        assertThat(p).isEqualTo(new SubnetEnv.Previous(env.network(), env.subnet(), env.ipv6Network(), env.ipv6Subnet()));
    }

    @Provide
    Arbitrary<byte[]> bytes() {
        return Arbitraries.randomValue(r -> {
            byte[] b = new byte[r.nextInt(301)];
            r.nextBytes(b);
            return b;
        });
    }

    /** Lines of flannel's keys with CIDR-ish values, odd separators, quotes, comments and line ends. */
    @Provide
    Arbitrary<String> dotenv() {
        return Arbitraries.randomValue(r -> {
            StringBuilder sb = new StringBuilder();
            for (int n = r.nextInt(8); n > 0; n--) {
                sb.append(pick(r, KEYS)).append(pick(r, SEPARATORS)).append(value(r)).append(pick(r, ENDINGS));
            }
            return sb.toString();
        });
    }

    @Provide
    Arbitrary<SubnetEnv> envs() {
        return Arbitraries.randomValue(r -> {
            boolean v4 = r.nextInt(3) != 0;
            boolean v6 = !v4 || r.nextBoolean();
            Ip4Net net = v4 ? new Ip4Net(r.nextInt(), r.nextInt(31)) : null;
            Ip6Net net6 = v6 ? new Ip6Net(r.nextLong(), r.nextLong(), r.nextInt(127)) : null;
            return new SubnetEnv(net, v4 ? new Ip4Net(r.nextInt(), r.nextInt(31)) : null,
                    net6, v6 ? new Ip6Net(r.nextLong(), r.nextLong(), r.nextInt(127)) : null,
                    1 + r.nextInt(65535), r.nextBoolean());
        });
    }

    private static String value(Random r) {
        switch (r.nextInt(6)) {
            case 0:
                return JsonShapes.ipv4Cidr(r);
            case 1:
                return JsonShapes.ipv6Cidr(r);
            case 2:
                return JsonShapes.ipv4Cidr(r) + "," + JsonShapes.ipv6Cidr(r);
            case 3:
                return "\"" + JsonShapes.ipv4Cidr(r);
            case 4:
                return String.valueOf(r.nextInt());
            default:
                return JsonShapes.randomText(r, 30);
        }
    }

    private static String pick(Random r, List<String> list) {
        return list.get(r.nextInt(list.size()));
    }
}
