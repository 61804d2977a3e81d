package org.jflannel.core;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;

/**
 * net-conf.json as whoever writes the ConfigMap or the etcd config key gives it: {@link NetConf#parse}
 * returns a config or throws {@link ConfigException}, for every backend's section and both modes,
 * never another exception. Seeds and reproducers: src/test/resources/org/jflannel/core/NetConfFuzzTestInputs.
 */
class NetConfFuzzTest {
    @FuzzTest(maxDuration = "5m")
    void netConfParsesOrRejects(byte[] input) {
        String json = new String(input, StandardCharsets.UTF_8);
        for (NetConf.Mode mode : NetConf.Mode.values()) {
            try {
                if (NetConf.parse(json, mode, "net-conf.json") == null) {
                    throw new AssertionError("parse returned null");
                }
            } catch (ConfigException expected) {
                // the documented rejection
            }
        }
    }
}
