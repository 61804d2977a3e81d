package org.jflannel.subnet.kube;

import org.jflannel.core.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KubeEnvTest {

    @ParameterizedTest(name = "EVENT_QUEUE_DEPTH={0} -> {1}")
    @CsvSource({"'', 5000", "1, 1", "5000, 5000", "12345, 12345", "+7, 7", "0, 5000", "-3, 5000"})
    void eventQueueDepth(String value, int depth) throws ConfigException {
        assertThat(KubeEnv.from(Map.of("EVENT_QUEUE_DEPTH", value)).eventQueueDepth()).isEqualTo(depth);
    }

    @Test
    void eventQueueDepthDefaultsTo5000() throws ConfigException {
        assertThat(KubeEnv.from(Map.of()).eventQueueDepth()).isEqualTo(5000);
    }

    @ParameterizedTest(name = "EVENT_QUEUE_DEPTH={0}")
    @CsvSource(delimiter = '|', value = {
            "abc   | env EVENT_QUEUE_DEPTH=abc format error: strconv.Atoi: parsing \"abc\": invalid syntax",
            "1.5   | env EVENT_QUEUE_DEPTH=1.5 format error: strconv.Atoi: parsing \"1.5\": invalid syntax",
            "' 5'  | env EVENT_QUEUE_DEPTH= 5 format error: strconv.Atoi: parsing \" 5\": invalid syntax",
            "99999999999999999999 | env EVENT_QUEUE_DEPTH=99999999999999999999 format error: strconv.Atoi: parsing \"99999999999999999999\": value out of range",
    })
    void nonIntegerDepthIsFatalWithUpstreamsMessage(String value, String message) {
        assertThatThrownBy(() -> KubeEnv.from(Map.of("EVENT_QUEUE_DEPTH", value)))
                .isInstanceOf(ConfigException.class).hasMessage(message);
    }

    @ParameterizedTest(name = "CONT_WHEN_CACHE_NOT_READY={0} -> {1}")
    @CsvSource({"true, true", "1, true", "TRUE, true", "false, false", "yes, false", "'', false"})
    void continueWhenCacheNotReady(String value, boolean expected) throws ConfigException {
        assertThat(KubeEnv.from(Map.of("CONT_WHEN_CACHE_NOT_READY", value)).contWhenCacheNotReady()).isEqualTo(expected);
    }
}
