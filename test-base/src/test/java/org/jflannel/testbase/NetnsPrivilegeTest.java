package org.jflannel.testbase;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/** The netns fixtures' rule: without privilege, fail under the integration profile, skip elsewhere. */
class NetnsPrivilegeTest {
    private static final long NET_ADMIN = 1L << NetnsPrivilege.CAP_NET_ADMIN;
    private static final long SYS_ADMIN = 1L << NetnsPrivilege.CAP_SYS_ADMIN;

    @Test
    void missingPrivilegeFailsUnderIntegration() {
        assertThatThrownBy(() -> NetnsPrivilege.decide(true, 0)).isInstanceOf(AssertionFailedError.class)
                .hasMessageContaining("CAP_NET_ADMIN");
        assertThatThrownBy(() -> NetnsPrivilege.decide(true, NET_ADMIN))
                .isInstanceOf(AssertionFailedError.class).hasMessageContaining("CAP_SYS_ADMIN");
        assertThatThrownBy(() -> NetnsPrivilege.decide(true, SYS_ADMIN)).isInstanceOf(AssertionFailedError.class);
    }

    @Test
    void missingPrivilegeSkipsOtherwise() {
        assertThatThrownBy(() -> NetnsPrivilege.decide(false, 0)).isInstanceOf(TestAbortedException.class);
    }

    @Test
    void bothCapabilitiesPass() {
        assertThatCode(() -> NetnsPrivilege.decide(true, NET_ADMIN | SYS_ADMIN)).doesNotThrowAnyException();
    }
}
