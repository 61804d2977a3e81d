package org.jflannel.testsupport.netns;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class NetnsNamesTest {

    @Test
    void uniqueNamesFitIfnamsizAndDiffer() {
        String a = NetnsNames.unique("nodeWithALongName");
        String b = NetnsNames.unique("nodeWithALongName");
        assertThat(a).hasSizeLessThanOrEqualTo(15).startsWith("nodewi-").isNotEqualTo(b);
        assertThat(NetnsNames.unique("arg0")).startsWith("jt-");
    }
}
