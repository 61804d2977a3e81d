package org.jflannel.e2e;

import org.junit.jupiter.api.Tag;

/** {@link UpstreamNodeClusterTests} on host-gw: upstream routes our subnets via our addresses on eth0, ours its. */
@Tag("e2e")
class UpstreamHostGwClusterIT extends UpstreamNodeClusterTests {
    @Override
    String backend() {
        return "host-gw";
    }
}
