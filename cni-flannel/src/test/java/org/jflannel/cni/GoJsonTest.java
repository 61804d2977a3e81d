package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Go's encoding/json behaviour that reaches users: syntax error texts, number and string encoding. */
class GoJsonTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "''|unexpected end of JSON input",
        "'   '|unexpected end of JSON input",
        "{|unexpected end of JSON input",
        "x|invalid character 'x' looking for beginning of value",
        "{x|invalid character 'x' looking for beginning of object key string",
        "{\"a\" 1}|invalid character '1' after object key",
        "{\"a\":1 \"b\"|invalid character '\"' after object key:value pair",
        "[1 2]|invalid character '2' after array element",
        "[}|invalid character '}' looking for beginning of value",
        "{} {}|invalid character '{' after top-level value",
        "01|invalid character '1' after top-level value",
        "-x|invalid character 'x' in numeric literal",
        "1.x|invalid character 'x' after decimal point in numeric literal",
        "1ex|invalid character 'x' in exponent of numeric literal",
        "tru|unexpected end of JSON input",
        "trUe|invalid character 'U' in literal true (expecting 'u')",
        "fals3|invalid character '3' in literal false (expecting 'e')",
        "\"\\x\"|invalid character 'x' in string escape code",
        "\"\\u12g4\"|invalid character 'g' in \\u hexadecimal character escape",
        "'\"a\tb\"'|invalid character '\\t' in string literal",
        "{'\\''|invalid character '\\'' looking for beginning of object key string"})
    void syntaxErrorsHaveGosTexts(String input, String message) {
        assertThatThrownBy(() -> GoJson.parse(input)).isInstanceOf(GoJson.SyntaxException.class).hasMessage(message);
    }

    @Test
    void parsesValuesKeepsLastDuplicateAndDecodesEscapes() throws Exception {
        Object v = GoJson.parse("{\"a\":1,\"b\":[true,false,null,\"x\\u00e9\\ud83d\\ude00\\n\"],\"a\":{\"c\":-0.5e1}}");
        assertThat(v).isEqualTo(Map.of("a", Map.of("c", new GoNumber("-0.5e1")),
            "b", java.util.Arrays.asList(true, false, null, "xé😀\n")));
    }

    @Test
    void invalidUtf8AndLoneSurrogatesBecomeReplacementCharacters() throws Exception {
        byte[] bad = {'"', 'a', (byte) 0xff, 'b', '"'};
        assertThat(GoJson.parse(bad)).isEqualTo("a\ufffdb");
        assertThat(GoJson.parse("\"\\ud800x\"")).isEqualTo("\ufffdx");
    }

    @Test
    void compactWriterSortsKeysAndEscapesLikeGo() {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("b", "<&>\u2028\u2029\u0001\u007f\"\\\t");
        m.put("a", List.of());
        m.put("é", Map.of());
        m.put("A", null);
        assertThat(new String(GoJsonWriter.compact(m), StandardCharsets.UTF_8))
            .isEqualTo("{\"A\":null,\"a\":[],\"b\":\"\\u003c\\u0026\\u003e\\u2028\\u2029\\u0001\u007f\\\"\\\\\\t\",\"é\":{}}");
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "1.0|1", "1e3|1000", "12345678901234567890|12345678901234567000", "-0|-0", "0.1|0.1", "1e20|100000000000000000000",
        "1e21|1e+21", "1.5e300|1.5e+300", "0.000001|0.000001", "0.0000001|1e-7", "1.23e-10|1.23e-10", "3.14159|3.14159",
        "-2.5|-2.5", "9007199254740993|9007199254740992"})
    void numbersGoThroughFloat64(String literal, String go) {
        assertThat(new GoNumber(literal).goText()).isEqualTo(go);
    }

    @Test
    void quoteCharMatchesGo() {
        assertThat(GoText.quoteChar('\'')).isEqualTo("'\\''");
        assertThat(GoText.quoteChar('"')).isEqualTo("'\"'");
        assertThat(GoText.quoteChar(1)).isEqualTo("'\\x01'");
        assertThat(GoText.quoteChar(0xe9)).isEqualTo("'é'");
    }
}
