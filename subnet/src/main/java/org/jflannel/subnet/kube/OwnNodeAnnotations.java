package org.jflannel.subnet.kube;

import org.jflannel.core.Ip6Net;
import org.jflannel.core.LeaseAttrs;

import java.net.Inet6Address;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The annotations our node must carry for {@code attrs} (REFERENCE §4.5 step 3), computed as upstream's
 * AcquireLease does: backend data per family only when the backend has some, {@code *-overwrite}
 * annotations taking precedence over the detected public IP, {@code kube-subnet-manager: "true"}.
 */
final class OwnNodeAnnotations {

    private OwnNodeAnnotations() {
    }

    /** The annotations to set: the desired ones whose value differs from {@code current}; empty when none. */
    static Map<String, String> changes(KubeAnnotations keys, LeaseAttrs attrs, boolean ipv4, Map<String, String> current) {
        Map<String, String> changes = new LinkedHashMap<>();
        desired(keys, attrs, ipv4, current).forEach((k, v) -> {
            if (!v.equals(current.get(k))) {
                changes.put(k, v);
            }
        });
        return changes;
    }

    static Map<String, String> desired(KubeAnnotations keys, LeaseAttrs attrs, boolean ipv4, Map<String, String> current) {
        String type = attrs.backendType();
        // Go marshals an absent json.RawMessage as null
        String data = attrs.backendData() == null ? "null" : attrs.backendData();
        String v6Data = attrs.backendV6Data() == null ? "null" : attrs.backendV6Data();
        boolean vxlan = type.equals("vxlan");
        boolean wireguard = type.equals("wireguard");
        Map<String, String> want = new LinkedHashMap<>();
        want.put(keys.backendType(), type);
        if ((vxlan && !data.equals("null")) || (wireguard && !data.equals("null") && ipv4) || (!vxlan && !wireguard)) {
            want.put(keys.backendData(), data);
            String overwrite = current.getOrDefault(keys.publicIpOverwrite(), "");
            if (!overwrite.isEmpty()) {
                want.put(keys.publicIp(), overwrite);
            } else if (attrs.publicIp() != null) {
                want.put(keys.publicIp(), attrs.publicIp().getHostAddress());
            }
        }
        boolean hasV6 = attrs.publicIpv6() != null;
        if ((vxlan && !v6Data.equals("null")) || (wireguard && !v6Data.equals("null") && hasV6)
                || (type.equals("host-gw") && hasV6)) {
            want.put(keys.backendV6Data(), v6Data);
            String overwrite = current.getOrDefault(keys.publicIpv6Overwrite(), "");
            if (!overwrite.isEmpty()) {
                want.put(keys.publicIpv6(), overwrite);
            } else if (hasV6) {
                want.put(keys.publicIpv6(), format(attrs.publicIpv6()));
            }
        }
        want.put(keys.subnetKubeManaged(), "true");
        return want;
    }

    /** As Go prints an IPv6 address (RFC 5952: lower case, longest zero run compressed). */
    static String format(Inet6Address address) {
        Ip6Net host = Ip6Net.of(address, 128);
        return Ip6Net.formatAddress(host.high(), host.low());
    }
}
