package org.jflannel.flanneld.probe;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ClassifierTest {
    private static final Outcome OK = Outcome.ok(0.0002);
    private static final Outcome LOST = Outcome.LOST;
    private static final Outcome EMSGSIZE = Outcome.error("send EMSGSIZE");

    static Stream<Arguments> rounds() {
        return Stream.of(
                // small, fullSize, underlay (null = not asked), stale → cause (null = reachable)
                Arguments.of("everything answers", OK, OK, null, false, null),
                Arguments.of("small passes, full size lost", OK, LOST, null, false, Cause.MTU_BLACK_HOLE),
                Arguments.of("small passes, full size refused locally", OK, EMSGSIZE, null, false, Cause.MTU_BLACK_HOLE),
                Arguments.of("overlay lost, underlay lost", LOST, LOST, LOST, false, Cause.UNDERLAY_UNREACHABLE),
                Arguments.of("underlay down explains stale entries too", LOST, LOST, LOST, true, Cause.UNDERLAY_UNREACHABLE),
                Arguments.of("overlay lost, underlay ok", LOST, LOST, OK, false, Cause.OVERLAY_BLOCKED),
                Arguments.of("overlay lost, underlay ok, entries wrong", LOST, LOST, OK, true, Cause.STALE_ENTRIES),
                Arguments.of("overlay refused (no route), underlay ok", Outcome.error("send ENETUNREACH"), LOST, OK, false,
                        Cause.OVERLAY_BLOCKED),
                Arguments.of("a stale flag without an overlay failure changes nothing", OK, OK, null, true, null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rounds")
    void roundIsClassified(String name, Outcome small, Outcome fullSize, Outcome underlay, boolean stale, Cause expected) {
        assertThat(Classifier.classify(small, fullSize, underlay, stale)).isEqualTo(Optional.ofNullable(expected));
    }
}
