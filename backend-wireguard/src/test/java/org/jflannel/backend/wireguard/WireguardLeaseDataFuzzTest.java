package org.jflannel.backend.wireguard;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;

/**
 * A peer's wireguard backend data ({@code {"PublicKey":"<base64>","Port":51820}}) as any writer of its
 * lease gives it. Properties: {@link WireguardLeaseData#parse} gives the data or empty (an unusable peer
 * is skipped), never throws; a key is 32 bytes and a port within 0..65535; what parsed is written as
 * upstream writes it and reads back equal (decode(encode(x)) = x).
 */
class WireguardLeaseDataFuzzTest {

    @FuzzTest(maxDuration = "5m")
    void peerBackendData(byte[] input) {
        Optional<WireguardLeaseData> d = WireguardLeaseData.parse(new String(input, StandardCharsets.UTF_8));
        if (d.isEmpty()) {
            return;
        }
        WireguardLeaseData w = d.get();
        if (w.publicKey().length != 32 || w.port() < 0 || w.port() > 65535) {
            throw new AssertionError("unusable data accepted: port " + w.port());
        }
        WireguardLeaseData again = WireguardLeaseData.parse(w.toJson()).orElseThrow();
        if (!Arrays.equals(again.publicKey(), w.publicKey()) || again.port() != w.port()) {
            throw new AssertionError("round trip: " + w.toJson());
        }
    }
}
