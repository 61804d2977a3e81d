package org.jflannel.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class MacAddressTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
            "12:c6:65:89:b4:e3, 12:c6:65:89:b4:e3",
            "12:C6:65:89:B4:E3, 12:c6:65:89:b4:e3",
            "00:00:00:00:00:00, 00:00:00:00:00:00",
            "ff:ff:ff:ff:ff:ff, ff:ff:ff:ff:ff:ff",
    })
    void parseAndFormatLowerCaseColons(String text, String expected) {
        MacAddress mac = MacAddress.parse(text);
        assertThat(mac).hasToString(expected);
        assertThat(MacAddress.of(mac.bytes())).isEqualTo(mac);
    }

    @Test
    void valueHoldsTheBytesBigEndian() {
        assertThat(MacAddress.parse("12:c6:65:89:b4:e3").value()).isEqualTo(0x12c66589b4e3L);
        assertThat(MacAddress.parse("12:c6:65:89:b4:e3").bytes())
                .containsExactly(0x12, 0xc6, 0x65, 0x89, 0xb4, 0xe3);
    }

    @ParameterizedTest(name = "[{index}] \"{0}\"")
    @ValueSource(strings = {"", "12:c6:65:89:b4", "12:c6:65:89:b4:e3:00", "12-c6-65-89-b4-e3", "12:c6:65:89:b4:g3",
            "12:c6:65:89:b4:e", " 12:c6:65:89:b4:e3", "12:c6:65:89:b4:٣٣", "12c6.6589.b4e3"})
    void badTextIsRejectedWithTheText(String text) {
        assertThatThrownBy(() -> MacAddress.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("invalid MAC address: " + text);
    }

    @Test
    void badValuesAreRejected() {
        assertThatThrownBy(() -> new MacAddress(1L << 48)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("MAC address must fit in 48 bits: 1000000000000");
        assertThatThrownBy(() -> MacAddress.of(new byte[5])).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("MAC address needs 6 bytes, got 5");
    }

    @RepeatedTest(20)
    void randomLocalIsLocallyAdministeredUnicast() {
        byte first = MacAddress.randomLocal().bytes()[0];
        assertThat(first & 0x02).isEqualTo(0x02);
        assertThat(first & 0x01).isZero();
    }
}
