package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class NetlinkBadInputTest {


    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "10.244.1.0/24      | 10.244.1.0/24",
            "10.244.1.7/24      | 10.244.1.7/24",
            "10.244.1.7         | 10.244.1.7/32",
            "fd00:1::/64        | fd00:1::/64",
            "fd00:0:0:1::1/128  | fd00:0:0:1::1/128",
            "::/0               | ::/0"})
    void parsesPrefixes(String text, String expected) {
        assertThat(IpPrefix.parse(text).toString()).isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "10.244.1.0/33", "10.244.1.0/", "10.244.1/24", "300.1.1.1/8", "10.0.0.0/-1",
            "fd00::/129", "example.com/24", "10.0.0.0/2 4", "fd00::g/64"})
    void rejectsInvalidPrefixesNamingThem(String text) {
        assertThatThrownBy(() -> IpPrefix.parse(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(text.isEmpty() ? "empty" : text);
    }

    @Test
    void networkClearsHostBits() {
        assertThat(IpPrefix.parse("10.244.1.7/20").network()).isEqualTo(IpPrefix.parse("10.244.0.0/20"));
        assertThat(IpPrefix.parse("fd00:1:2:3::1/48").network()).isEqualTo(IpPrefix.parse("fd00:1:2::/48"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"flannel.1234567890", "a/b", "with space", "..", ""})
    void rejectsBadInterfaceNames(String name) {
        assertThatThrownBy(() -> new VxlanSpec(name, 1, 0, null, 0, false, false, 0, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("vxlan name");
    }

    @Test
    void vniAndPortAreRangeChecked() {
        assertThatThrownBy(() -> new VxlanSpec("flannel.1", 1 << 24, 0, null, 0, false, false, 0, null))
                .hasMessageContaining("VNI");
        assertThatThrownBy(() -> new VxlanSpec("flannel.1", 1, 0, null, 70000, false, false, 0, null))
                .hasMessageContaining("port");
    }

    /** Checked before anything is sent (the socket is opened, nothing is asked of the kernel). */
    @Test
    void vxlanGpeNameAndPortAreCheckedBeforeSending() throws Exception {
        try (RtNetlink nl = RtNetlink.open()) {
            assertThatThrownBy(() -> nl.createVxlanGpe("flannel0-gpe-too-long", 4790))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("vxlan-gpe name");
            assertThatThrownBy(() -> nl.createVxlanGpe("g0", 0))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("vxlan-gpe port");
            assertThatThrownBy(() -> nl.createVxlanGpe("g0", 65536)).hasMessageContaining("65536");
        }
    }

    @Test
    void truncatedAttributesEndTheWalkInsteadOfReadingPastTheMessage() {
        ByteBuffer b = ByteBuffer.allocate(12).order(ByteOrder.nativeOrder());
        b.putShort((short) 8).putShort((short) 3).putInt(7);      // a good attribute
        b.putShort((short) 40).putShort((short) 4);               // claims 40 bytes, only 4 left
        NlAttrs a = NlAttrs.parse(b, 0, 12);
        assertThat(a.u32(3, -1)).isEqualTo(7);
        assertThat(a.has(4)).isFalse();
    }
}
