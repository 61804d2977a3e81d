package org.jflannel.flanneld.config;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * flanneld's command line and {@code FLANNELD_*} environment, as a DaemonSet's args and env (or anyone
 * writing them) give them. The input is NUL-separated: the arguments, then the environment as
 * {@code KEY=VALUE} items. Property: {@link FlagParser#parse} returns an outcome (run, help, version or a
 * failure with a message), never throws, and a run carries its options.
 */
class FlagParserFuzzTest {

    @FuzzTest(maxDuration = "5m")
    void flagsAndEnvironment(byte[] input) {
        String text = new String(input, StandardCharsets.UTF_8);
        int split = text.indexOf("\0\0");
        String argText = split < 0 ? text : text.substring(0, split);
        List<String> args = argText.isEmpty() ? List.of() : Arrays.asList(argText.split("\0", 64));
        Map<String, String> env = new HashMap<>();
        if (split >= 0) {
            for (String kv : text.substring(split + 2).split("\0", 64)) {
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    env.put(kv.substring(0, eq), kv.substring(eq + 1));
                }
            }
        }
        FlagParser.Outcome o = FlagParser.parse(args, env);
        if (o == null) {
            throw new AssertionError("no outcome");
        }
        if (o instanceof FlagParser.Outcome.Run run && run.options() == null) {
            throw new AssertionError("a run without options");
        }
        if (o instanceof FlagParser.Outcome.Failure f && (f.message() == null || f.message().isBlank())) {
            throw new AssertionError("a failure without a message");
        }
    }
}
