package org.jflannel.testbase;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Records every test class (or other container) whose set-up was aborted by an assumption, for the
 * suite's summary ({@code bin/test-summary}). Surefire's and Failsafe's reports leave such a class out
 * altogether ({@code tests="0" skipped="0"}: a class whose {@code @BeforeAll} or cluster set-up skipped,
 * e.g. for want of upstream's binaries, looks as if it had no tests), so nobody could tell a skip from
 * a pass. One tab-separated line per aborted container, appended to
 * {@code target/test-skips/aborted-<pid>.tsv} of the module the tests run in (the working directory
 * Maven forks them in): class, display name, its tests, the reason's first line. Registered through
 * {@code META-INF/services}; does nothing where there is no {@code target/} (e.g. the kernel VM's runner).
 */
public final class AbortedContainers implements TestExecutionListener {
    /** Where the lines go, relative to the module's directory. */
    public static final String DIR = "target/test-skips";
    private final Path dir;
    private TestPlan plan;

    /** The listener Maven's forks load: records in {@link #DIR}. */
    public AbortedContainers() {
        this(Path.of(DIR));
    }

    /** Records in {@code dir} (whose parent must exist). */
    public AbortedContainers(Path dir) {
        this.dir = dir;
    }

    @Override
    public void testPlanExecutionStarted(TestPlan testPlan) {
        plan = testPlan;
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (!id.isContainer() || result.getStatus() != TestExecutionResult.Status.ABORTED || id.getParentId().isEmpty()) {
            return;
        }
        String reason = result.getThrowable().map(t -> String.valueOf(t.getMessage())).orElse("aborted");
        write(dir, line(className(id.getSource()), id.getDisplayName(), tests(id), reason));
    }

    /** One record: the fields with tabs and line breaks flattened, the reason cut to its first line. */
    static String line(String className, String displayName, long tests, String reason) {
        String first = reason.lines().findFirst().orElse("").strip();
        return String.join("\t", flat(className), flat(displayName), Long.toString(tests), flat(first)) + "\n";
    }

    private static void write(Path dir, String line) {
        if (!Files.isDirectory(dir.toAbsolutePath().getParent())) {
            return;
        }
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("aborted-" + ProcessHandle.current().pid() + ".tsv"), line, StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            System.err.println("test-skips: cannot record an aborted container in " + dir + ": " + e);
        }
    }

    /** The tests the container holds as planned (at least 1: a template's invocations are never planned when it aborts). */
    private long tests(TestIdentifier id) {
        long n = plan == null ? 0 : plan.getDescendants(id).stream().filter(TestIdentifier::isTest).count();
        return Math.max(1, n);
    }

    private static String className(Optional<TestSource> source) {
        return source.map(s -> s instanceof ClassSource c ? c.getClassName()
                : s instanceof MethodSource m ? m.getClassName() + "#" + m.getMethodName() : s.toString()).orElse("?");
    }

    private static String flat(String s) {
        return s.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
    }
}
