package org.jflannel.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** Whatever text arrives, NetConf.parse either returns a config or throws a ConfigException naming the source. */
class NetConfPropertyTest {

    @Property(tries = 100_000)
    void arbitraryStringsGiveOnlyConfigExceptions(@ForAll String text) {
        oneMode(text);
    }

    @Property(tries = 100_000)
    void arbitraryBytesGiveOnlyConfigExceptions(@ForAll("bytes") byte[] bytes) {
        oneMode(new String(bytes, StandardCharsets.UTF_8));
        oneMode(new String(bytes, StandardCharsets.ISO_8859_1));
    }

    @Property(tries = 100_000)
    void mutatedValidConfigsGiveOnlyConfigExceptions(@ForAll("mutated") String json) {
        oneMode(json);
    }

    @Property(tries = 100_000)
    void structuredConfigsGiveOnlyConfigExceptions(@ForAll("structured") String json) {
        if ((json.hashCode() & 1) == 0) {
            parseOrConfigException(json, NetConf.Mode.KUBE);
        }
        NetConf conf = parseOrConfigException(json, NetConf.Mode.ETCD);
        if (conf != null && conf.enableIPv4()) {
            // a config that passed validation can allocate its own bounds
            assertThat(conf.network().contains(conf.subnetMin())).isTrue();
            assertThat(conf.network().contains(conf.subnetMax())).isTrue();
        }
    }

    /** Random bytes, 0..300 long, drawn directly (jqwik's boxed byte[] generation is ten times slower). */
    @Provide
    Arbitrary<byte[]> bytes() {
        return Arbitraries.randomValue(r -> {
            byte[] b = new byte[r.nextInt(301)];
            r.nextBytes(b);
            return b;
        });
    }

    @Provide
    Arbitrary<String> mutated() {
        return JsonShapes.mutatedValid();
    }

    @Provide
    Arbitrary<String> structured() {
        return JsonShapes.structured();
    }

    /**
     * Kube or etcd mode, picked from the input itself: a mode parameter would double jqwik's
     * per-try cost, and parsing every input twice doubles the run time (each rejected input
     * costs two exceptions with deep stacks under the test engine).
     */
    private static void oneMode(String text) {
        parseOrConfigException(text, (text.hashCode() & 1) == 0 ? NetConf.Mode.KUBE : NetConf.Mode.ETCD);
    }

    private static NetConf parseOrConfigException(String text, NetConf.Mode mode) {
        try {
            return NetConf.parse(text, mode);
        } catch (ConfigException e) {
            assertThat(e.getMessage()).startsWith("net-conf.json: ");
            assertThat(e.field()).isNotNull();
            return null;
        }
    }
}
