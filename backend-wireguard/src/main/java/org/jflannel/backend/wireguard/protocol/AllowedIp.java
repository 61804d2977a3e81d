package org.jflannel.backend.wireguard.protocol;

/** An IPv4 prefix a peer may send from and is sent to (cryptokey routing). */
public record AllowedIp(int address, int prefixLength) {
    public AllowedIp {
        if (prefixLength < 0 || prefixLength > 32) {
            throw new IllegalArgumentException("allowed ip prefix: expected 0..32, got " + prefixLength);
        }
        address &= mask(prefixLength);
    }

    static int mask(int prefixLength) {
        return prefixLength == 0 ? 0 : -1 << (32 - prefixLength);
    }

    public boolean contains(int ip) {
        return (ip & mask(prefixLength)) == address;
    }

    @Override
    public String toString() {
        return new Endpoint(address, 1).toString().replace(":1", "") + "/" + prefixLength;
    }
}
