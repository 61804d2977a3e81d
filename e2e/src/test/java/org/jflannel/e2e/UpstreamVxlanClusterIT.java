package org.jflannel.e2e;

import org.junit.jupiter.api.Tag;

/** {@link UpstreamNodeClusterTests} on vxlan: upstream programs flannel.1 for our leases, ours for its. */
@Tag("e2e")
class UpstreamVxlanClusterIT extends UpstreamNodeClusterTests {
    @Override
    String backend() {
        return "vxlan";
    }
}
