package org.jflannel.cni;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.Arrays;

/**
 * The CNI stdin config as the runtime passes it, through the plugin's own Go-compatible JSON reader
 * and upstream's NetConf decoding, on the plugin's 512 KiB stack. Properties: {@link GoJson#parse}
 * returns a tree or a {@link GoJson.SyntaxException}; a tree Go could hold (its numbers within float64:
 * Go's decoder refuses others in an {@code interface{}}, as {@link GoDecode} does, and its encoder cannot
 * write them), written compactly, parses back to the same tree (decode(encode(x)) = x);
 * {@link FlannelNetConf#decode} returns a config or a
 * {@link CniException}; never another exception, never a stack overflow.
 */
class CniStdinFuzzTest {

    @FuzzTest(maxDuration = "5m")
    void goJsonParsesAndRoundTrips(byte[] input) throws Exception {
        SmallStack.call(() -> {
            Object tree;
            try {
                tree = GoJson.parse(input);
            } catch (GoJson.SyntaxException rejected) {
                return null;
            }
            if (!finite(tree)) {
                return null;
            }
            byte[] again = GoJsonWriter.compact(tree);
            Object back = GoJson.parse(again);
            if (!Arrays.equals(GoJsonWriter.compact(back), again)) {
                throw new AssertionError("round trip differs: " + new String(again, java.nio.charset.StandardCharsets.UTF_8));
            }
            return null;
        });
    }

    private static boolean finite(Object v) {
        if (v instanceof GoNumber n) {
            return !Double.isInfinite(n.value());
        }
        if (v instanceof java.util.Map<?, ?> m) {
            return m.values().stream().allMatch(CniStdinFuzzTest::finite);
        }
        if (v instanceof java.util.List<?> l) {
            return l.stream().allMatch(CniStdinFuzzTest::finite);
        }
        return true;
    }

    @FuzzTest(maxDuration = "5m")
    void flannelNetConfDecodesOrRejects(byte[] input) throws Exception {
        SmallStack.call(() -> {
            try {
                FlannelNetConf c = FlannelNetConf.decode(input);
                if (c.subnetFile() == null || c.dataDir() == null) {
                    throw new AssertionError("defaults missing: " + c);
                }
            } catch (CniException rejected) {
                // the documented rejection
            }
            return null;
        });
    }
}
