package org.jflannel.backend.extension;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GoCommandTest {
    private static final Map<String, String> VARS = Map.of("SUBNET", "10.244.3.0/24", "PUBLIC_IP", "192.0.2.3",
            "A", "x", "EMPTY", "", "SPACED", "a b");

    @Test
    void fieldsSplitOnGoWhiteSpaceIncludingNoBreakAndIdeographicSpaces() {
        assertThat(GoCommand.fields("  ip\troute \n replace\u00a0$SUBNET\u3000via\u2003x  "))
                .containsExactly("ip", "route", "replace", "$SUBNET", "via", "x");
        assertThat(GoCommand.fields(" \t ")).isEmpty();
        assertThat(GoCommand.fields("")).isEmpty();
    }

    @ParameterizedTest(name = "{0} -> [{1}]")
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            "$SUBNET | 10.244.3.0/24",
            "${SUBNET} | 10.244.3.0/24",
            "via=$PUBLIC_IP/32 | via=192.0.2.3/32",
            "x${A}y$A | xxyx",
            "$UNKNOWN | ``",
            "a$ | a$",
            "$ | $",
            "$/x | $/x",
            "${} | ``",
            "a${SUBNET | aSUBNET",
            "$$ | ``",
            "$1x | x",
            "${-}y | y",
            "${A.B}z | z",
            "cost$EMPTY! | cost!",
    })
    void expandFollowsGosOsExpand(String in, String out) {
        assertThat(GoCommand.expand(in, VARS)).isEqualTo(out);
    }

    @Test
    void aVariableIsExpandedAfterTheSplitSoItsSpacesStayInOneArgument() {
        assertThat(GoCommand.argv("echo $SPACED 'q r'", VARS)).isEqualTo(List.of("echo", "a b", "'q", "r'"));
    }
}
