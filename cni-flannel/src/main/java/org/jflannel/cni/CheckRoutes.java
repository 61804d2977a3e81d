package org.jflannel.cni;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code prevResult} CHECK hands the delegate, with each route that names no {@code gw} given the
 * gateway of the first address of its family, which is how the delegate's ADD installed it
 * (containernetworking's {@code ipam.ConfigureIface}). bridge 1.1.x's CHECK otherwise looks for a
 * gateway-less route that its own ADD never creates, and fails on flannel's network route
 * ({@code Expected Route {Dst:10.244.0.0/16 GW:<nil>} not found in routing table}).
 */
final class CheckRoutes {
    private CheckRoutes() {
    }

    /** A copy of {@code prevResult} with the gateways filled in; the argument is not changed. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> withGateways(Map<String, Object> prevResult) {
        Object routes = prevResult.get("routes");
        Object ips = prevResult.get("ips");
        if (!(routes instanceof List<?> routeList) || !(ips instanceof List<?> ipList)) {
            return prevResult;
        }
        String v4 = null;
        String v6 = null;
        for (Object o : ipList) {
            if (o instanceof Map<?, ?> ip && ip.get("gateway") instanceof String gw && ip.get("address") instanceof String addr) {
                if (addr.contains(":")) {
                    v6 = v6 == null ? gw : v6;
                } else {
                    v4 = v4 == null ? gw : v4;
                }
            }
        }
        List<Object> filled = new ArrayList<>();
        for (Object o : routeList) {
            if (o instanceof Map<?, ?> r && r.get("gw") == null && r.get("dst") instanceof String dst) {
                String gw = dst.contains(":") ? v6 : v4;
                if (gw != null) {
                    Map<String, Object> copy = new LinkedHashMap<>((Map<String, Object>) r);
                    copy.put("gw", gw);
                    filled.add(copy);
                    continue;
                }
            }
            filled.add(o);
        }
        Map<String, Object> out = new LinkedHashMap<>(prevResult);
        out.put("routes", filled);
        return out;
    }
}
