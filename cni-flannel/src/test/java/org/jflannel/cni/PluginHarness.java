package org.jflannel.cni;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Runs the plugin in-process against a temp directory holding subnet.env, a data dir and a
 * CNI_PATH with a fake delegate: a shell script that records each call (command, stdin, whether
 * the scratch file existed) and answers from canned files the test writes.
 */
final class PluginHarness {

    static final String V4_ENV = "FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_SUBNET=10.1.17.1/24\nFLANNEL_MTU=1472\nFLANNEL_IPMASQ=true\n";
    static final String KUBE_ENV = "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n";
    static final String CONTAINER = "c0ffee01";

    record Outcome(int exit, String stdout, String stderr) {
    }

    /** One recorded delegate call. */
    record Call(String command, String stdin, boolean scratchExisted) {
    }

    final Path dir;
    final Path bin;
    final Path calls;
    final Path dataDir;
    final Path subnetFile;
    final Map<String, String> env = new HashMap<>();

    PluginHarness(Path dir) {
        this.dir = dir;
        this.bin = dir.resolve("bin");
        this.calls = dir.resolve("calls");
        this.dataDir = dir.resolve("data");
        this.subnetFile = dir.resolve("subnet.env");
        try {
            Files.createDirectories(bin);
            Files.createDirectories(calls);
            installFake("bridge");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        env.put("CNI_COMMAND", "ADD");
        env.put("CNI_CONTAINERID", CONTAINER);
        env.put("CNI_NETNS", "/run/netns/pod-under-test");
        env.put("CNI_IFNAME", "eth0");
        env.put("CNI_PATH", bin.toString());
        env.put("FAKE_SCRATCH", dataDir.resolve(CONTAINER).toString());
        env.put("JFLANNEL_CNI_DATA_DIR", dataDir.toString()); // the launcher keeps scratch files only there
    }

    /** A fake plugin named {@code type}: answers from reply.CMD / stderr.CMD / exit.CMD in the temp dir. */
    void installFake(String type) throws IOException {
        Path script = bin.resolve(type);
        String d = dir.toString();
        Files.writeString(script, "#!/bin/sh\n"
            + "n=$(ls " + calls + " | wc -l)\n"
            + "f=" + calls + "/$(printf %03d $n)-$CNI_COMMAND\n"
            + "cat > $f.in\n"
            + "if [ -f \"$FAKE_SCRATCH\" ]; then echo yes > $f.scratch; else echo no > $f.scratch; fi\n"
            + "[ -f " + d + "/reply.$CNI_COMMAND ] && cat " + d + "/reply.$CNI_COMMAND\n"
            + "[ -f " + d + "/stderr.$CNI_COMMAND ] && cat " + d + "/stderr.$CNI_COMMAND >&2\n"
            + "if [ -f " + d + "/exit.$CNI_COMMAND ]; then exit $(cat " + d + "/exit.$CNI_COMMAND); fi\n"
            + "exit 0\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    PluginHarness subnetEnv(String content) throws IOException {
        Files.writeString(subnetFile, content);
        return this;
    }

    PluginHarness reply(String command, String stdout) throws IOException {
        Files.writeString(dir.resolve("reply." + command), stdout);
        return this;
    }

    PluginHarness fail(String command, int exit, String stdout, String stderr) throws IOException {
        Files.writeString(dir.resolve("exit." + command), Integer.toString(exit));
        Files.deleteIfExists(dir.resolve("reply." + command));
        if (stdout != null) {
            Files.writeString(dir.resolve("reply." + command), stdout);
        }
        if (stderr != null) {
            Files.writeString(dir.resolve("stderr." + command), stderr);
        }
        return this;
    }

    /** The standard config: name, subnetFile and dataDir in the temp dir, plus {@code extra} JSON members. */
    String config(String extra) {
        return "{\"name\":\"cni-flannel\",\"type\":\"flannel\",\"subnetFile\":\"" + subnetFile + "\",\"dataDir\":\"" + dataDir + "\""
            + (extra.isEmpty() ? "" : "," + extra) + "}";
    }

    Outcome run(String command, String stdin) {
        env.put("CNI_COMMAND", command);
        return runWith(env, stdin);
    }

    /** In-process, or through the launcher and the fast path ({@link FastPathFixture}). */
    static Outcome runWith(Map<String, String> env, String stdin) {
        return FastPathFixture.FAST ? FastPathFixture.run(env, stdin) : runInProcess(env, stdin);
    }

    static Outcome runInProcess(Map<String, String> env, String stdin) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = new FlannelPlugin(env, new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
            new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8)).run();
        return new Outcome(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    List<Call> calls() throws IOException {
        List<Call> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(calls)) {
            for (Path p : s.filter(p -> p.toString().endsWith(".in")).sorted().toList()) {
                String base = p.getFileName().toString();
                String cmd = base.substring(base.indexOf('-') + 1, base.length() - 3);
                String scratch = Files.readString(calls.resolve(base.replace(".in", ".scratch"))).strip();
                out.add(new Call(cmd, Files.readString(p), scratch.equals("yes")));
            }
        }
        return out;
    }

    Path scratch() {
        return dataDir.resolve(CONTAINER);
    }

    /** The error JSON the plugin prints (REFERENCE §11.7 with Ours' cniVersion), written out by hand. */
    static String error(String version, long code, String msg, String details) {
        return "{\n    \"cniVersion\": \"" + version + "\",\n    \"code\": " + code + ",\n    \"msg\": " + jsonString(msg)
            + (details.isEmpty() ? "" : ",\n    \"details\": " + jsonString(details)) + "\n}";
    }

    private static String jsonString(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
