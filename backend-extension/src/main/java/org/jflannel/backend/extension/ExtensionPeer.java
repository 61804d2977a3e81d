package org.jflannel.backend.extension;

import org.jflannel.core.Ip4Net;

/**
 * What the operator's commands are given for one peer lease: {@code SUBNET}, {@code PUBLIC_IP} and the
 * peer's backend data decoded from its JSON string (standard input). The unit the loop keeps per lease.
 *
 * @param subnet   the peer's IPv4 subnet; null for a lease without one ({@code SUBNET} is then "null", as before)
 * @param publicIp the peer's public IP as text, "" when it has none
 * @param stdin    the decoded backend data, "" when it has none
 */
record ExtensionPeer(Ip4Net subnet, String publicIp, String stdin) {
    ExtensionPeer {
        java.util.Objects.requireNonNull(publicIp, "publicIp");
        java.util.Objects.requireNonNull(stdin, "stdin");
    }
}
