package org.jflannel.testsupport.netns;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A test in throwaway network namespaces: every {@code NetNs} parameter is a fresh namespace with a
 * unique name (at most 15 characters), deleted after the test, also when it fails. Tagged
 * {@code netns}, so it runs in the integration tier, where a missing privilege fails the test.
 *
 * <pre>{@code
 * @NetnsTest
 * void routeGoesIn(NetNs node) throws Exception {
 *     node.run(() -> { try (RtNetlink nl = RtNetlink.open()) { ... } });
 * }
 * }</pre>
 */
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Test
@Tag("netns")
@ExtendWith(NetnsExtension.class)
public @interface NetnsTest {
}
