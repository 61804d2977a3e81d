package org.jflannel.testsupport.netns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

class NetnsPrivilegeTest {
    private static final long NET_AND_SYS_ADMIN = (1L << 12) | (1L << 21);

    @Test
    void missingPrivilegeFailsUnderTheIntegrationProfile() {
        assertThatThrownBy(() -> NetnsPrivilege.decide(true, 0)).isInstanceOf(AssertionFailedError.class)
                .hasMessageContaining("CAP_NET_ADMIN");
        assertThatThrownBy(() -> NetnsPrivilege.decide(true, 1L << 12)).isInstanceOf(AssertionFailedError.class);
    }

    @Test
    void missingPrivilegeSkipsOutsideTheIntegrationProfile() {
        assertThatThrownBy(() -> NetnsPrivilege.decide(false, 0)).isInstanceOf(TestAbortedException.class);
    }

    @Test
    void bothCapabilitiesPass() {
        assertThatCode(() -> NetnsPrivilege.decide(true, NET_AND_SYS_ADMIN)).doesNotThrowAnyException();
    }

    @Test
    void uniqueNamesFitIfnamsizAndDiffer() {
        String a = NetnsNames.unique("nodeWithALongName");
        String b = NetnsNames.unique("nodeWithALongName");
        assertThat(a).hasSizeLessThanOrEqualTo(15).startsWith("nodewi-").isNotEqualTo(b);
        assertThat(NetnsNames.unique("arg0")).startsWith("jt-");
    }
}
