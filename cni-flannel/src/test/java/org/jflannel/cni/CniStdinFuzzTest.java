package org.jflannel.cni;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.Arrays;

/**
 * The CNI stdin config as the runtime passes it, through the plugin's own Go-compatible JSON reader
 * and upstream's NetConf decoding, on the plugin's 512 KiB stack. Properties: {@link GoJson#parse}
 * returns a tree or a {@link GoJson.SyntaxException}; what it returns, written compactly, parses
 * back to the same tree (decode(encode(x)) = x); {@link FlannelNetConf#decode} returns a config or a
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
            byte[] again = GoJsonWriter.compact(tree);
            Object back = GoJson.parse(again);
            if (!Arrays.equals(GoJsonWriter.compact(back), again)) {
                throw new AssertionError("round trip differs: " + new String(again, java.nio.charset.StandardCharsets.UTF_8));
            }
            return null;
        });
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
