package org.jflannel.subnet.etcd;

import java.time.Instant;
import org.jflannel.core.ConfigException;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;

/** An etcd key and value, as upstream writes them, turned into a {@link Lease} (and back). */
final class EtcdLeases {
    private EtcdLeases() {
    }

    /** Parses key and value; {@code expiration} is null for a reservation (no etcd lease). */
    static Lease decode(String key, String value, Instant expiration) throws ConfigException {
        LeaseKeyCodec.Subnets s = LeaseKeyCodec.parse(key);
        LeaseAttrs attrs = LeaseValueCodec.parse(key, value);
        return new Lease(s.ipv4(), s.ipv6(), attrs, expiration);
    }

    /** A lease that went away: its subnets from the key, its attributes as last known (or empty). */
    static Lease removed(String key, Lease lastKnown) throws ConfigException {
        if (lastKnown != null) {
            return new Lease(lastKnown.subnet(), lastKnown.ipv6Subnet(), lastKnown.attrs(), null);
        }
        LeaseKeyCodec.Subnets s = LeaseKeyCodec.parse(key);
        return new Lease(s.ipv4(), s.ipv6(), new LeaseAttrs(null, null, "", null, null), null);
    }
}
