package org.jflannel.testbase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.launcher.core.LauncherConfig;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;

class AbortedContainersTest {

    /** A class skipped in its set-up, as the interop tests are without upstream's binaries (run only by the test below). */
    static class SkippedInSetUp {
        @BeforeAll
        static void needsSomething() {
            Assumptions.abort("skipped: needs upstream flanneld v0.20.2: set JFLANNEL_UPSTREAM_DIR\nsecond line");
        }

        @Test
        void one() {
        }

        @Test
        void two() {
        }
    }

    /** A class whose test itself is skipped: Surefire reports that one, so it is not recorded here. */
    static class SkippedInATest {
        @Test
        void one() {
            Assumptions.abort("not here");
        }

        @Test
        void two() {
        }
    }

    @Test
    void aClassAbortedInItsSetUpIsRecordedWithItsTestsAndTheReasonsFirstLineAndATestsOwnSkipIsNot(@TempDir Path tmp)
            throws Exception {
        Path dir = tmp.resolve("test-skips");
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        LauncherFactory.create(LauncherConfig.builder().enableTestExecutionListenerAutoRegistration(false).build())
                .execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(SkippedInSetUp.class),
                        selectClass(SkippedInATest.class)).build(), new AbortedContainers(dir), summary);

        assertThat(summary.getSummary().getTestsSucceededCount()).isEqualTo(1);
        List<String> lines;
        try (Stream<Path> files = Files.list(dir)) {
            lines = files.flatMap(f -> {
                try {
                    return Files.readAllLines(f).stream();
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).toList();
        }
        assertThat(lines).containsExactly(SkippedInSetUp.class.getName() + "\tAbortedContainersTest$SkippedInSetUp\t2\t"
                + "skipped: needs upstream flanneld v0.20.2: set JFLANNEL_UPSTREAM_DIR");
    }

    @Test
    void nothingIsWrittenWhereTheModulesTargetIsMissing(@TempDir Path tmp) {
        Path dir = tmp.resolve("no-target/test-skips");
        LauncherFactory.create(LauncherConfig.builder().enableTestExecutionListenerAutoRegistration(false).build())
                .execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(SkippedInSetUp.class)).build(),
                        new AbortedContainers(dir));
        assertThat(dir.getParent()).doesNotExist();
    }
}
