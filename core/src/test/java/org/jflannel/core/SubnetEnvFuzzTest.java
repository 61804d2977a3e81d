package org.jflannel.core;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;

/**
 * subnet.env as its two readers take it: the CNI plugin ({@link CniSubnetEnv#parse}: values or a
 * {@link ConfigException} in Go's words) and flanneld at start, reading the file it left last time
 * ({@link SubnetEnv#parsePrevious}: never throws, anything odd is ignored). Where the previous file is
 * one flanneld could have written (both subnets present), writing it again and reading it back gives
 * the same networks (decode(encode(x)) = x).
 */
class SubnetEnvFuzzTest {

    @FuzzTest(maxDuration = "5m")
    void bothReadersTakeAnyFile(byte[] input) {
        String text = new String(input, StandardCharsets.UTF_8);
        try {
            CniSubnetEnv env = CniSubnetEnv.parse("/run/flannel/subnet.env", text);
            if (env.networks() == null || env.ipv6Networks() == null) {
                throw new AssertionError("null lists");
            }
        } catch (ConfigException expected) {
            // the documented rejection
        }
        SubnetEnv.Previous p = SubnetEnv.parsePrevious(text);
        if (p == null) {
            throw new AssertionError("parsePrevious returned null");
        }
        if ((p.network() != null && p.subnet() != null) || (p.ipv6Network() != null && p.ipv6Subnet() != null)) {
            boolean v4 = p.network() != null && p.subnet() != null;
            boolean v6 = p.ipv6Network() != null && p.ipv6Subnet() != null;
            SubnetEnv written = new SubnetEnv(v4 ? p.network() : null, v4 ? p.subnet() : null,
                    v6 ? p.ipv6Network() : null, v6 ? p.ipv6Subnet() : null, 1450, true);
            SubnetEnv.Previous again = SubnetEnv.parsePrevious(written.render());
            if (!java.util.Objects.equals(again.network(), written.network())
                    || !java.util.Objects.equals(again.subnet(), written.subnet())
                    || !java.util.Objects.equals(again.ipv6Network(), written.ipv6Network())
                    || !java.util.Objects.equals(again.ipv6Subnet(), written.ipv6Subnet())) {
                throw new AssertionError("round trip: " + written + " -> " + again);
            }
        }
    }
}
