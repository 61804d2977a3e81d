package org.jflannel.subnet.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.jflannel.core.ConfigException;
import org.jflannel.core.Lease;

/** Arbitrary etcd keys and values give a lease or a {@link ConfigException} (a skip), never anything else. */
class LeaseParsersPropertyTest {

    @Property(tries = 2000)
    void arbitraryKeyAndValueGiveALeaseOrASkip(@ForAll("keys") String key, @ForAll("values") String value) {
        try {
            Lease l = EtcdLeases.decode(key, value, null);
            assertThat(l.subnet()).isNotNull();
            // what parsed must survive our own writer and reader unchanged
            assertThat(LeaseValueCodec.parse(key, LeaseValueCodec.format(l.attrs()))).isEqualTo(l.attrs());
        } catch (ConfigException skip) {
            assertThat(skip.getMessage()).contains(key);
        }
    }

    @Property(tries = 2000)
    void arbitraryTextIsNeverAnUnexpectedException(@ForAll String key, @ForAll String value) {
        try {
            EtcdLeases.decode(key, value, null);
        } catch (ConfigException skip) {
            assertThat(skip.field()).isNotNull();
        }
    }

    @Provide
    Arbitrary<String> keys() {
        Arbitrary<String> octet = Arbitraries.integers().between(0, 300).map(String::valueOf);
        Arbitrary<String> v4 = Arbitraries.of("", "/coreos.com/network/subnets/").flatMap(p ->
                octet.list().ofSize(4).map(o -> p + String.join(".", o)));
        Arbitrary<String> len = Arbitraries.integers().between(0, 140).map(String::valueOf);
        Arbitrary<String> v6 = Arbitraries.of("", "&fc00::-64", "&fc00::-", "&::-129", "&fc00:::1-64", "&ffff:ffff::-48");
        return Arbitraries.oneOf(
                net.jqwik.api.Combinators.combine(v4, len, v6).as((a, b, c) -> a + "-" + b + c),
                Arbitraries.strings().ofMaxLength(40));
    }

    @Provide
    Arbitrary<String> values() {
        Arbitrary<String> ip = Arbitraries.of("\"10.0.0.1\"", "\"300.0.0.1\"", "null", "1", "\"fd00::1\"", "\"::ffff:1.2.3.4\"", "[]", "{}");
        Arbitrary<String> v6 = Arbitraries.of("null", "\"fd00::1\"", "\"10.0.0.1\"", "\"\"", "{}", "true");
        Arbitrary<String> data = Arbitraries.of("{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:01\"}", "null", "1e3", "\"s<>\"",
                "[1,{\"a\":[]}]", "{", "}", "\"\\u2028\"", "{\"a\":\"\\\"\"}");
        Arbitrary<String> structured = net.jqwik.api.Combinators.combine(ip, v6, Arbitraries.of("\"vxlan\"", "null", "7", "\"\""), data)
                .as((a, b, c, d) -> "{\"PublicIP\":" + a + ",\"publicipv6\":" + b + ",\"BackendType\":" + c + ",\"BackendData\":" + d + "}");
        return Arbitraries.oneOf(structured, Arbitraries.strings().ofMaxLength(60),
                structured.map(s -> s.substring(0, s.length() / 2)));
    }
}
