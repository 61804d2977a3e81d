package org.jflannel.linuxnet;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/** The netns fixture's rule: without privilege, fail under the integration profile, skip elsewhere. */
class PrivilegeTest {

    @Test
    void missingPrivilegeFailsUnderIntegration() {
        assertThatThrownBy(() -> Privilege.decide(true, 0)).isInstanceOf(AssertionFailedError.class);
        assertThatThrownBy(() -> Privilege.decide(true, 1L << Privilege.CAP_NET_ADMIN))
                .isInstanceOf(AssertionFailedError.class).hasMessageContaining("CAP_SYS_ADMIN");
    }

    @Test
    void missingPrivilegeSkipsOtherwise() {
        assertThatThrownBy(() -> Privilege.decide(false, 0)).isInstanceOf(TestAbortedException.class);
    }

    @Test
    void rootPasses() {
        assertThatCode(() -> Privilege.decide(true, (1L << Privilege.CAP_NET_ADMIN) | (1L << Privilege.CAP_SYS_ADMIN)))
                .doesNotThrowAnyException();
    }
}
