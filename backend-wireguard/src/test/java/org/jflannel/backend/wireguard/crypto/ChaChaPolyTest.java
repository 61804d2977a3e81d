package org.jflannel.backend.wireguard.crypto;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jflannel.backend.wireguard.crypto.CryptoVectorsTest.msg;
import static org.jflannel.backend.wireguard.crypto.CryptoVectorsTest.range;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * What the data plane relies on beyond the vectors: sealing and opening in place (one array, same
 * offset) give what separate arrays give, and the key spec one instance keeps across messages
 * follows the key's bytes, also when the session's array is wiped or rewritten in place.
 */
class ChaChaPolyTest {
    @Test
    void sealAndOpenInPlaceMatchSeparateArrays() {
        byte[] key = range(3, 32);
        byte[] plain = msg(1420);
        byte[] separate = new byte[1420 + ChaChaPoly.TAG];
        assertThat(new ChaChaPoly().seal(key, 9, plain, 0, plain.length, separate, 0)).isEqualTo(separate.length);

        ChaChaPoly aead = new ChaChaPoly();
        byte[] buf = new byte[16 + 1420 + ChaChaPoly.TAG];
        System.arraycopy(plain, 0, buf, 16, plain.length);
        assertThat(aead.seal(key, 9, buf, 16, plain.length, buf, 16)).isEqualTo(separate.length);
        assertThat(Arrays.copyOfRange(buf, 16, buf.length)).isEqualTo(separate);

        assertThat(aead.open(key, 9, buf, 16, separate.length, buf, 16)).isEqualTo(plain.length);
        assertThat(Arrays.copyOfRange(buf, 16, 16 + plain.length)).isEqualTo(plain);
    }

    @Test
    void aKeyRewrittenInItsArrayIsTheNewKeyAtTheNextMessage() {
        ChaChaPoly aead = new ChaChaPoly();
        byte[] key = range(0, 32);
        byte[] plain = msg(100);
        byte[] underOld = aead.seal(key, 1, plain, new byte[0]);
        assertThat(aead.seal(key, 2, plain, new byte[0])).isNotEqualTo(underOld); // another nonce, same spec
        Arrays.fill(key, (byte) 0); // a wiped session key: its array, new bytes
        byte[] underZero = aead.seal(key, 1, plain, new byte[0]);
        assertThat(underZero).isEqualTo(new ChaChaPoly().seal(new byte[32], 1, plain, new byte[0])).isNotEqualTo(underOld);
        assertThat(aead.open(range(0, 32), 1, underOld, new byte[0])).contains(plain);
        assertThat(aead.open(key, 1, underOld, new byte[0])).isEmpty();
    }
}
