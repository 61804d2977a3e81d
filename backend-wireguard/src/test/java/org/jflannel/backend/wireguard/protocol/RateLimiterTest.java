package org.jflannel.backend.wireguard.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jflannel.backend.wireguard.protocol.Net.ip;

import org.junit.jupiter.api.Test;

class RateLimiterTest {
    private static final long MS = 1_000_000L;
    private static final Endpoint A = new Endpoint(ip(192, 0, 2, 1), 51820);
    private static final Endpoint A_OTHER_PORT = new Endpoint(ip(192, 0, 2, 1), 40000);
    private static final Endpoint B = new Endpoint(ip(192, 0, 2, 2), 51820);
    private final RateLimiter limiter = new RateLimiter();
    private long now = 7_000_000_000L;

    private int allowedAtOnce(Endpoint from, int tries) {
        int n = 0;
        for (int i = 0; i < tries; i++) {
            if (limiter.allow(from, now)) {
                n++;
            }
        }
        return n;
    }

    @Test
    void aBurstOfFiveThenTwentyASecond() {
        assertThat(allowedAtOnce(A, 50)).isEqualTo(RateLimiter.BURST);
        now += 49 * MS;
        assertThat(limiter.allow(A, now)).isFalse();
        now += 1 * MS; // 50 ms: one token
        assertThat(limiter.allow(A, now)).isTrue();
        assertThat(limiter.allow(A, now)).isFalse();
        int allowed = 0;
        for (int i = 0; i < 1000; i++) { // 10 s at one try per 10 ms
            now += 10 * MS;
            allowed += limiter.allow(A, now) ? 1 : 0;
        }
        assertThat(allowed).isEqualTo(10 * RateLimiter.PER_SECOND);
    }

    @Test
    void theBucketIsPerAddressNotPerPort() {
        assertThat(allowedAtOnce(A, 3)).isEqualTo(3);
        assertThat(allowedAtOnce(A_OTHER_PORT, 10)).isEqualTo(2);
        assertThat(allowedAtOnce(B, 10)).isEqualTo(RateLimiter.BURST); // another address is not touched
    }

    @Test
    void ipv6SharesOneBucketPerSlash64() {
        Endpoint host1 = new Endpoint(0x20010db800000001L, 0x1L, 51821);
        Endpoint sameSlash64 = new Endpoint(0x20010db800000001L, 0xffffL, 51821);
        Endpoint otherSlash64 = new Endpoint(0x20010db800000002L, 0x1L, 51821);
        Endpoint zeroHigh = new Endpoint(0L, 0x1L, 51821); // ::1, not to be confused with any IPv4 address
        assertThat(allowedAtOnce(host1, 3)).isEqualTo(3);
        assertThat(allowedAtOnce(sameSlash64, 10)).isEqualTo(2);
        assertThat(allowedAtOnce(otherSlash64, 10)).isEqualTo(RateLimiter.BURST);
        assertThat(allowedAtOnce(zeroHigh, 10)).isEqualTo(RateLimiter.BURST);
        assertThat(allowedAtOnce(new Endpoint(1, 51820), 10)).isEqualTo(RateLimiter.BURST); // 0.0.0.1
    }

    @Test
    void aSourceIdleForASecondIsForgottenWithAFullBucket() {
        allowedAtOnce(A, 10);
        allowedAtOnce(B, 10);
        assertThat(limiter.sources()).isEqualTo(2);
        now += 1000 * MS;
        assertThat(allowedAtOnce(A, 10)).isEqualTo(RateLimiter.BURST);
        assertThat(limiter.sources()).isEqualTo(1); // B swept
    }

    @Test
    void aFullTableRefusesNewSourcesButNotKnownOnes() {
        RateLimiter small = new RateLimiter(2);
        assertThat(small.allow(A, now)).isTrue();
        assertThat(small.allow(B, now)).isTrue();
        assertThat(small.allow(new Endpoint(ip(192, 0, 2, 3), 51820), now)).isFalse();
        assertThat(small.allow(A, now)).isTrue();
        now += 1000 * MS; // both forgotten: room again
        assertThat(small.allow(new Endpoint(ip(192, 0, 2, 3), 51820), now)).isTrue();
        assertThat(small.sources()).isEqualTo(1);
    }
}
