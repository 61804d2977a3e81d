package org.jflannel.linuxnet.netlink;

import java.util.Objects;

/**
 * An interface address.
 *
 * @param scope RT_SCOPE_* (0 universe, 253 link, 254 host)
 * @param flags IFA_F_* (from IFA_FLAGS when present)
 */
public record Address(int linkIndex, IpPrefix prefix, int scope, int flags) {
    public Address {
        Objects.requireNonNull(prefix, "prefix");
    }
}
