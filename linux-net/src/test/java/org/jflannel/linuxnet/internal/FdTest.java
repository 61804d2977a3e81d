package org.jflannel.linuxnet.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.jflannel.linuxnet.internal.Fd;
import org.jflannel.linuxnet.internal.LibC;
import org.junit.jupiter.api.Test;

class FdTest {

    @Test
    void closesExactlyOnceAndRefusesUseAfterClose() {
        Fd fd = new Fd(LibC.open("/dev/null", LibC.O_RDONLY | LibC.O_CLOEXEC, 0), "dev-null");
        assertThat(fd.isOpen()).isTrue();
        assertThat(fd.get()).isNotNegative();
        fd.close();
        fd.close(); // second close: no-op, never closes a number the process may have reused
        assertThat(fd.isOpen()).isFalse();
        assertThatThrownBy(fd::get).isInstanceOf(IllegalStateException.class).hasMessageContaining("dev-null");
    }

    @Test
    void rejectsInvalidDescriptors() {
        assertThatThrownBy(() -> new Fd(-1, "x")).isInstanceOf(IllegalArgumentException.class);
    }
}
