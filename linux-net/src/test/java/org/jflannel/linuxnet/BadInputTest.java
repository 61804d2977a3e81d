package org.jflannel.linuxnet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BadInputTest {

    @Test
    void nameOfSixteenCharactersSaysHowLong() {
        assertThatThrownBy(() -> Names.checkIfName("link name", "abcdefghijklmnop"))
                .hasMessage("link name: interface name \"abcdefghijklmnop\" is longer than 15 characters (16)");
    }

    @Test
    void exceptionMessageNamesOperationObjectErrnoAndKernelText() {
        NetlinkException e = new NetlinkException("RTM_NEWROUTE", "10.244.3.0/24 via 10.244.3.0 dev flannel.1", 17,
                "File exists");
        assertThat(e).hasMessage("RTM_NEWROUTE 10.244.3.0/24 via 10.244.3.0 dev flannel.1: EEXIST (17): File exists");
        assertThat(new NetlinkException("RTM_DELLINK", "x", 19, "")).hasMessage("RTM_DELLINK x: ENODEV (19)");
    }
}
