package org.jflannel.backend.vxlan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.linuxnet.NetlinkException;
import org.junit.jupiter.api.Test;

class RetryTest {
    final List<Duration> slept = new ArrayList<>();
    final Retry retry = Retry.upstream(slept::add);

    @Test
    void triesTenTimesWithDoublingBackOffPlusJitter() {
        int[] calls = {0};
        assertThatThrownBy(() -> retry.run("route", () -> {
            calls[0]++;
            throw new NetlinkException("RTM_NEWROUTE", "10.244.3.0/24", 16, "");
        })).isInstanceOf(NetlinkException.class);
        assertThat(calls[0]).isEqualTo(10);
        assertThat(slept).hasSize(9);
        for (int i = 0; i < slept.size(); i++) {
            long base = 100L << i;
            assertThat(slept.get(i).toMillis()).isBetween(base, base + 100);
        }
    }

    @Test
    void stopsAtTheFirstSuccess() throws Exception {
        int[] calls = {0};
        retry.run("neighbour", () -> {
            if (++calls[0] < 3) {
                throw new IOException("EBUSY");
            }
        });
        assertThat(calls[0]).isEqualTo(3);
        assertThat(slept).hasSize(2);
    }

    @Test
    void doesNotRetryWhenTheDeviceIsGone() {
        int[] calls = {0};
        assertThatThrownBy(() -> retry.run("fdb", () -> {
            calls[0]++;
            throw new NetlinkException("RTM_NEWNEIGH", "fdb", Retry.ENODEV, "");
        })).isInstanceOf(NetlinkException.class);
        assertThat(calls[0]).isEqualTo(1);
        assertThat(slept).isEmpty();
    }
}
