package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** skel's checks, in its order, with upstream's codes and texts (REFERENCE §11.7, §12). */
class ProtocolErrorsTest {

    private static final String OK = "{\"name\":\"net\",\"cniVersion\":\"1.0.0\"}";
    private static final String SUPPORTS = "plugin supports [\"0.1.0\" \"0.2.0\" \"0.3.0\" \"0.3.1\" \"0.4.0\" \"1.0.0\" \"1.1.0\"]";

    @TempDir
    Path dir;

    /** env overrides ("-" removes a variable), stdin, expected error version, code, msg, details. */
    static Stream<Arguments> cases() {
        return Stream.of(
            row("CNI_COMMAND=ADD,CNI_CONTAINERID=-,CNI_NETNS=-,CNI_IFNAME=-,CNI_PATH=-", OK, "1.1.0", 4,
                "required env variables [CNI_CONTAINERID,CNI_NETNS,CNI_IFNAME,CNI_PATH] missing", ""),
            row("CNI_COMMAND=DEL,CNI_CONTAINERID=-,CNI_NETNS=-,CNI_IFNAME=-,CNI_PATH=-", OK, "1.1.0", 4,
                "required env variables [CNI_CONTAINERID,CNI_IFNAME,CNI_PATH] missing", ""),
            row("CNI_COMMAND=CHECK,CNI_NETNS=-", OK, "1.1.0", 4, "required env variables [CNI_NETNS] missing", ""),
            row("CNI_COMMAND=GC,CNI_PATH=-,CNI_CONTAINERID=-", OK, "1.1.0", 4, "required env variables [CNI_PATH] missing", ""),
            row("CNI_COMMAND=STATUS,CNI_PATH=-", OK, "1.1.0", 4, "required env variables [CNI_PATH] missing", ""),
            row("CNI_COMMAND=ADD,CNI_CONTAINERID=../etc,CNI_PATH=-", OK, "1.1.0", 4, "invalid characters in containerID", "../etc"),
            row("CNI_COMMAND=ADD,CNI_CONTAINERID=-abc", OK, "1.1.0", 4, "invalid characters in containerID", "-abc"),
            row("CNI_COMMAND=ADD,CNI_IFNAME=eth0123456789abc", OK, "1.1.0", 4, "interface name is too long",
                "interface name should be less than 16 characters"),
            row("CNI_COMMAND=ADD,CNI_IFNAME=..", OK, "1.1.0", 4, "interface name is . or ..", ""),
            row("CNI_COMMAND=ADD,CNI_IFNAME=et h0", OK, "1.1.0", 4, "interface name contains / or : or whitespace characters", ""),
            row("CNI_COMMAND=DEL,CNI_IFNAME=a:b", OK, "1.1.0", 4, "interface name contains / or : or whitespace characters", ""),
            row("CNI_COMMAND=ADD", "", "1.1.0", 6, "error unmarshall network config: unexpected end of JSON input", ""),
            row("CNI_COMMAND=ADD", "{\"name\":", "1.1.0", 6, "error unmarshall network config: unexpected end of JSON input", ""),
            row("CNI_COMMAND=ADD", "nope", "1.1.0", 6, "error unmarshall network config: invalid character 'o' in literal null (expecting 'u')", ""),
            row("CNI_COMMAND=ADD", "{\"name\":5}", "1.1.0", 6,
                "error unmarshall network config: json: cannot unmarshal number into Go struct field .name of type string", ""),
            row("CNI_COMMAND=ADD", "[]", "1.1.0", 6,
                "error unmarshall network config: json: cannot unmarshal array into Go value of type struct { Name string \"json:\\\"name\\\"\" }", ""),
            row("CNI_COMMAND=ADD", "{\"cniVersion\":\"0.3.1\"}", "0.3.1", 7, "missing network name", ""),
            row("CNI_COMMAND=ADD", "{\"name\":\"\"}", "1.1.0", 7, "missing network name", ""),
            row("CNI_COMMAND=ADD", "{\"name\":\"bad name\"}", "1.1.0", 7, "invalid characters found in network name", "bad name"),
            row("CNI_COMMAND=BOGUS", OK, "1.0.0", 4, "unknown CNI_COMMAND: BOGUS", ""),
            row("CNI_COMMAND=ADD", "{\"name\":\"n\",\"cniVersion\":\"9.9.9\"}", "9.9.9", 1, "incompatible CNI versions",
                "config is \"9.9.9\", " + SUPPORTS),
            row("CNI_COMMAND=DEL", "{\"name\":\"n\",\"cniVersion\":\"x\"}", "x", 1, "incompatible CNI versions", "config is \"x\", " + SUPPORTS),
            row("CNI_COMMAND=ADD", "{\"name\":\"n\",\"cniVersion\":5}", "1.1.0", 6,
                "decoding version from network config: json: cannot unmarshal number into Go struct field .cniVersion of type string", ""),
            row("CNI_COMMAND=CHECK", "{\"name\":\"n\",\"cniVersion\":\"0.3.1\"}", "0.3.1", 1, "config version does not allow CHECK", ""),
            row("CNI_COMMAND=CHECK", "{\"name\":\"n\"}", "1.1.0", 1, "config version does not allow CHECK", ""),
            row("CNI_COMMAND=GC", "{\"name\":\"n\",\"cniVersion\":\"1.0.0\"}", "1.0.0", 1, "config version does not allow GC", ""),
            row("CNI_COMMAND=STATUS", "{\"name\":\"n\",\"cniVersion\":\"1.0.0\"}", "1.0.0", 1, "config version does not allow STATUS", ""),
            row("CNI_COMMAND=CHECK", "{\"name\":\"n\",\"cniVersion\":\"2.0.0\"}", "2.0.0", 1, "plugin version does not allow CHECK", ""),
            row("CNI_COMMAND=GC", "{\"name\":\"n\",\"cniVersion\":\"1.2.0\"}", "1.2.0", 1, "plugin version does not allow GC", ""),
            row("CNI_COMMAND=CHECK", "{\"name\":\"n\",\"cniVersion\":\"1.0.5\"}", "1.0.5", 1, "incompatible CNI versions",
                "config is \"1.0.5\", " + SUPPORTS),
            row("CNI_COMMAND=STATUS", "{\"name\":\"n\",\"cniVersion\":\"x.1\"}", "x.1", 6,
                "failed to convert major version part \"x\": strconv.Atoi: parsing \"x\": invalid syntax", ""),
            row("CNI_COMMAND=GC", "{\"name\":\"n\",\"cniVersion\":\"1.x\"}", "1.x", 6,
                "failed to convert minor version part \"x\": strconv.Atoi: parsing \"x\": invalid syntax", ""),
            row("CNI_COMMAND=CHECK", "{\"name\":\"n\",\"cniVersion\":\"1.0.0.0\"}", "1.0.0.0", 6,
                "invalid version \"1.0.0.0\": too many parts", ""));
    }

    private static Arguments row(String env, String stdin, String version, long code, String msg, String details) {
        return Arguments.of(env, stdin, version, code, msg, details);
    }

    @ParameterizedTest(name = "[{index}] {0} {1} -> {3} {4}")
    @MethodSource("cases")
    void protocolErrorIsPrintedAsCniErrorJson(String envSpec, String stdin, String version, long code, String msg, String details) {
        PluginHarness h = new PluginHarness(dir);
        Map<String, String> env = new HashMap<>(h.env);
        for (String kv : envSpec.split(",")) {
            String[] p = kv.split("=", 2);
            if (p[1].equals("-")) {
                env.remove(p[0]);
            } else {
                env.put(p[0], p[1]);
            }
        }
        PluginHarness.Outcome o = PluginHarness.runWith(env, stdin);
        assertThat(o.stdout()).isEqualTo(PluginHarness.error(version, code, msg, details));
        assertThat(o.exit()).isEqualTo(1);
    }

    @Test
    void versionIgnoresStdinAndPrintsSupportedVersionsWithNewline() {
        Map<String, String> env = Map.of("CNI_COMMAND", "VERSION");
        PluginHarness.Outcome o = PluginHarness.runWith(env, "not json at all");
        assertThat(o.exit()).isZero();
        assertThat(o.stdout()).isEqualTo("{\"cniVersion\":\"1.1.0\",\"supportedVersions\":"
            + "[\"0.1.0\",\"0.2.0\",\"0.3.0\",\"0.3.1\",\"0.4.0\",\"1.0.0\",\"1.1.0\"]}\n");
    }

    @Test
    void unreadableStdinIsCode5() {
        PluginHarness h = new PluginHarness(dir);
        java.io.InputStream broken = new java.io.InputStream() {
            @Override
            public int read() throws java.io.IOException {
                throw new java.io.IOException("read /dev/stdin: input/output error");
            }
        };
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.io.PrintStream ps = new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8);
        int exit = new FlannelPlugin(h.env, broken, ps, ps).run();
        assertThat(exit).isEqualTo(1);
        assertThat(out.toString(java.nio.charset.StandardCharsets.UTF_8)).isEqualTo(PluginHarness.error("1.1.0", 5,
            "error reading from stdin: read /dev/stdin: input/output error", ""));
    }

    @Test
    void noCommandPrintsAboutTextOnStderrAndSucceeds() {
        PluginHarness.Outcome o = PluginHarness.runWith(Map.of(), "");
        assertThat(o.exit()).isZero();
        assertThat(o.stdout()).isEmpty();
        assertThat(o.stderr()).matches("CNI Plugin flannel version \\S+ \\(linux/\\w+\\) commit \\S+\n"
            + "CNI protocol versions supported: 0\\.1\\.0, 0\\.2\\.0, 0\\.3\\.0, 0\\.3\\.1, 0\\.4\\.0, 1\\.0\\.0, 1\\.1\\.0\n");
    }

    @Test
    void ownNetnsIsRefusedAfterTheCommandRan() throws Exception {
        PluginHarness h = new PluginHarness(dir).subnetEnv(PluginHarness.V4_ENV)
            .reply("ADD", "{\"cniVersion\":\"0.3.1\",\"ips\":[{\"version\":\"4\",\"address\":\"10.1.17.2/24\"}]}");
        h.env.put("CNI_NETNS", "/proc/self/ns/net");
        PluginHarness.Outcome o = h.run("ADD", h.config("\"cniVersion\":\"0.3.1\""));
        assertThat(o.exit()).isEqualTo(1);
        assertThat(o.stdout()).startsWith("{\n    \"cniVersion\": \"0.3.1\",\n    \"ips\"")
            .endsWith("}" + PluginHarness.error("0.3.1", 8, "plugin's netns and netns from CNI_NETNS should not be the same", ""));
        assertThat(h.calls()).extracting(PluginHarness.Call::command).containsExactly("ADD");
    }

    @Test
    void netnsOverrideSkipsTheOwnNetnsCheck() throws Exception {
        PluginHarness h = new PluginHarness(dir).subnetEnv(PluginHarness.V4_ENV);
        h.env.put("CNI_NETNS", "/proc/self/ns/net");
        h.env.put("CNI_NETNS_OVERRIDE", "TRUE");
        PluginHarness.Outcome o = h.run("DEL", h.config(""));
        assertThat(o.exit()).isZero();
        assertThat(o.stdout()).isEmpty();
    }
}
