package org.jflannel.backend.ipsec.vici;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The VICI wire format against bytes derived by hand from strongSwan's vici README, and malformed input. */
class ViciCodecTest {
    private static final HexFormat HEX = HexFormat.of();

    @Test
    void aCommandWithoutMessageIsLengthTypeAndName() {
        // length 9 = type (1) + name length (1) + "version" (7)
        assertThat(HEX.formatHex(ViciCodec.encode(ViciCodec.CMD_REQUEST, "version", ViciMessage.EMPTY)))
                .isEqualTo("00000009" + "00" + "07" + HEX.formatHex("version".getBytes()));
    }

    @Test
    void elementsEncodeAsTheReadmeSays() {
        ViciMessage m = ViciMessage.builder().put("key1", "value1")
                .put("section1", ViciMessage.builder().put("list1", List.of("item1", "item2")).build()).build();
        String body = "03" + "04" + hex("key1") + "0006" + hex("value1")
                + "01" + "08" + hex("section1")
                + "04" + "05" + hex("list1") + "05" + "0005" + hex("item1") + "05" + "0005" + hex("item2") + "06"
                + "02";
        byte[] packet = ViciCodec.encode(ViciCodec.CMD_RESPONSE, null, m);
        assertThat(HEX.formatHex(packet)).isEqualTo(String.format("%08x", 1 + body.length() / 2) + "01" + body);
    }

    @Test
    void nestedMessagesRoundTrip() throws Exception {
        ViciMessage conn = ViciMessage.builder().put("local_addrs", List.of("192.0.2.1")).put("version", "2")
                .put("local", ViciMessage.builder().put("auth", "psk").build())
                .put("children", ViciMessage.builder().put("a-b", ViciMessage.builder()
                        .put("local_ts", List.of("10.244.1.0/24")).put("esp_proposals", List.of()).build()).build())
                .build();
        ViciMessage m = ViciMessage.builder().put("192.0.2.1-x", conn).build();
        byte[] p = ViciCodec.encode(ViciCodec.EVENT, "list-conn", m);
        ViciCodec.Packet d = ViciCodec.decode(Arrays.copyOfRange(p, 4, p.length));
        assertThat(d.type()).isEqualTo(ViciCodec.EVENT);
        assertThat(d.name()).isEqualTo("list-conn");
        assertThat(d.message()).isEqualTo(m);
        assertThat(d.message().section("192.0.2.1-x").section("children").section("a-b").list("local_ts"))
                .containsExactly("10.244.1.0/24");
    }

    static Stream<Arguments> malformed() {
        return Stream.of(
                Arguments.of("empty packet", "", "truncated packet type at offset 0"),
                Arguments.of("unknown packet type", "09", "unknown packet type 9"),
                Arguments.of("name longer than the packet", "0005" + hex("abc"), "truncated packet name at offset 2"),
                Arguments.of("value longer than the packet", "01" + "03" + "01" + hex("k") + "0100" + hex("v"),
                        "truncated value of \"k\" at offset 6 (256 bytes wanted, 1 left)"),
                Arguments.of("unknown element", "01" + "09", "unknown element type 9 at offset 1"),
                Arguments.of("section end at the top", "01" + "02", "SECTION_END without a section at offset 1"),
                Arguments.of("unclosed section", "01" + "01" + "01" + hex("s"), "section \"s\" not closed"),
                Arguments.of("unclosed list", "01" + "04" + "01" + hex("l"), "list \"l\" not closed"),
                Arguments.of("item outside a list", "01" + "05" + "0000", "LIST_ITEM outside a list at offset 1"),
                Arguments.of("list end outside a list", "01" + "06", "LIST_END outside a list at offset 1"),
                Arguments.of("a key inside a list", "01" + "04" + "01" + hex("l") + "03" + "01" + hex("k") + "0000",
                        "element type 3 inside list \"l\" at offset 4"),
                Arguments.of("duplicate key", "01" + "03" + "01" + hex("k") + "0000" + "03" + "01" + hex("k") + "0000",
                        "duplicate key \"k\" at offset 6"),
                Arguments.of("nesting too deep", "01" + "01016101016101016101016101016101016101016101016101016101016101016101016101016101016101016101016101016101",
                        "sections nested deeper than 16"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void malformedPacketsFailNamingTheProblem(String what, String hex, String message) {
        assertThatThrownBy(() -> ViciCodec.decode(HEX.parseHex(hex)))
                .isInstanceOf(ViciException.class).hasMessageContaining(message);
    }

    @Test
    void oversizedNamesAndValuesAreRefusedWhenEncoding() {
        String longName = "n".repeat(256);
        assertThatThrownBy(() -> ViciCodec.encode(ViciCodec.CMD_REQUEST, "load-conn",
                ViciMessage.builder().put(longName, "v").build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be 1..255 bytes, got 256");
        assertThatThrownBy(() -> ViciCodec.encode(ViciCodec.CMD_REQUEST, "load-shared",
                ViciMessage.builder().put("data", "x".repeat(65536)).build()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("value of \"data\": 65536 bytes exceed 65535");
        assertThatThrownBy(() -> ViciMessage.builder().put("k", "a").put("k", "b"))
                .hasMessageContaining("duplicate key \"k\"");
    }

    private static String hex(String s) {
        return HEX.formatHex(s.getBytes());
    }
}
