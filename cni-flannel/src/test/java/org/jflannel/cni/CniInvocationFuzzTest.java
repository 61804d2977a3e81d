package org.jflannel.cni;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A whole plugin invocation as the runtime makes it: the CNI_* environment (CNI_ARGS included), the
 * stdin config and the subnet.env flanneld left, all from the input (NUL-separated: environment lines
 * {@code KEY=VALUE}, then subnet.env, then stdin). Properties: exit 0 (stdout empty or a JSON document),
 * or exit 1 with a CNI error JSON object (numeric {@code code}, string {@code msg}) on stdout, so never a
 * stack trace on stdout; never
 * another exception, never a stack overflow on the plugin's 512 KiB stack; nothing written in the
 * sandbox outside the data directory. Sandbox: CNI_PATH is an empty directory (no delegate runs), and
 * the config's subnetFile and dataDir are replaced by the sandbox's before the plugin reads it.
 */
class CniInvocationFuzzTest {
    private static final Path ROOT = sandbox();
    private static final Path BIN = ROOT.resolve("bin");
    private static final Path DATA = ROOT.resolve("data");
    private static final Path SUBNET = ROOT.resolve("subnet.env");

    @FuzzTest(maxDuration = "5m")
    void pluginAnswersEveryInvocation(byte[] input) throws Exception {
        int a = indexOf(input, 0, 0);
        int b = a < 0 ? -1 : indexOf(input, 0, a + 1);
        String envText = new String(input, 0, a < 0 ? input.length : a, StandardCharsets.UTF_8);
        String subnetEnv = a < 0 ? "" : new String(input, a + 1, (b < 0 ? input.length : b) - a - 1, StandardCharsets.UTF_8);
        byte[] stdin = b < 0 ? new byte[0] : java.util.Arrays.copyOfRange(input, b + 1, input.length);
        Map<String, String> env = new HashMap<>();
        for (String line : envText.split("\n", 16)) {
            int eq = line.indexOf('=');
            if (eq > 0 && line.startsWith("CNI_")) {
                env.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        if (env.containsKey("CNI_PATH")) {
            env.put("CNI_PATH", BIN.toString());
        }
        byte[] config = sandboxed(stdin);
        if (config == null) {
            return; // the config names its files in a way the sandbox cannot rewrite safely
        }
        Files.writeString(SUBNET, subnetEnv);
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        int exit = SmallStack.call(() -> new FlannelPlugin(env, new ByteArrayInputStream(config),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8)).run());
        String stdout = out.toString(StandardCharsets.UTF_8);
        if (!stdout.isEmpty() && !stdout.startsWith("{")) {
            throw new AssertionError("stdout is no JSON document (a stack trace?): " + stdout);
        }
        if (exit == 1) {
            Object json = GoJson.parse(out.toByteArray());
            if (!(json instanceof Map<?, ?> m) || !(m.get("code") instanceof GoNumber) || !(m.get("msg") instanceof String)) {
                throw new AssertionError("exit 1 without a CNI error JSON: " + stdout);
            }
        } else if (exit != 0) {
            throw new AssertionError("exit " + exit);
        }
        try (Stream<Path> s = Files.list(ROOT)) {
            List<Path> stray = s.filter(p -> !p.equals(BIN) && !p.equals(DATA) && !p.equals(SUBNET)).toList();
            if (!stray.isEmpty()) {
                throw new AssertionError("wrote outside its data directory: " + stray);
            }
        }
        clean(DATA);
    }

    /** stdin with subnetFile and dataDir (any spelling) replaced by the sandbox's; null to skip the input. */
    @SuppressWarnings("unchecked")
    private static byte[] sandboxed(byte[] stdin) throws Exception {
        Object tree;
        try {
            tree = SmallStack.call(() -> GoJson.parse(stdin));
        } catch (GoJson.SyntaxException | StackOverflowError notJson) {
            return stdin; // rejected before any file is touched (the overflow is the other targets' finding)
        }
        if (!(tree instanceof Map)) {
            return stdin;
        }
        Map<String, Object> m = new LinkedHashMap<>((Map<String, Object>) tree);
        m.keySet().removeIf(k -> k.equalsIgnoreCase("subnetFile") || k.equalsIgnoreCase("dataDir"));
        m.put("subnetFile", SUBNET.toString());
        m.put("dataDir", DATA.toString());
        byte[] out = GoJsonWriter.compact(m);
        try {
            FlannelNetConf c = FlannelNetConf.decode(out);
            return c.subnetFile().equals(SUBNET.toString()) && c.dataDir().equals(DATA.toString()) ? out : null;
        } catch (CniException e) {
            return out;
        }
    }

    private static int indexOf(byte[] in, int b, int from) {
        for (int i = from; i < in.length; i++) {
            if (in[i] == b) {
                return i;
            }
        }
        return -1;
    }

    private static Path sandbox() {
        try {
            Path root = Files.createTempDirectory("cni-fuzz");
            Files.createDirectories(root.resolve("bin"));
            Runtime.getRuntime().addShutdownHook(new Thread(() -> clean(root)));
            return root;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void clean(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).filter(p -> !p.equals(dir)).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
