package org.jflannel.cni;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jflannel.core.CniSubnetEnv;

/**
 * Builds the delegate's configuration from the plugin's stdin and subnet.env, in upstream's
 * order and with its rules (REFERENCE §11.3 step 4 to 6). The result is a Go-style map: written
 * with {@link GoJsonWriter#compact} it gives upstream's bytes, keys sorted, route objects in
 * field order.
 */
final class DelegateConfig {

    private DelegateConfig() {
    }

    /** Step 4: the user's delegate, checked. Absent gives a new empty map. */
    static Map<String, Object> checkedUserDelegate(FlannelNetConf conf) throws CniException {
        Map<String, Object> d = conf.delegate();
        if (d == null) {
            return new LinkedHashMap<>();
        }
        if (d.containsKey("type") && !(d.get("type") instanceof String)) {
            throw CniException.internal("'delegate' dictionary, if present, must have (string) 'type' field");
        }
        if (d.containsKey("name")) {
            throw CniException.internal("'delegate' dictionary must not have 'name' field, it'll be set by flannel");
        }
        if (d.containsKey("ipam")) {
            throw CniException.internal("'delegate' dictionary must not have 'ipam' field, it'll be set by flannel");
        }
        return new LinkedHashMap<>(d);
    }

    /** Steps 4 to 6: the whole delegate configuration for ADD (and for forwarding GC). */
    static Map<String, Object> build(FlannelNetConf conf, CniSubnetEnv env) throws CniException {
        Map<String, Object> d = checkedUserDelegate(conf);
        if (conf.runtimeConfig() != null) {
            d.put("runtimeConfig", conf.runtimeConfig());
        }
        d.put("name", conf.name());
        putIfMissing(d, "type", "bridge");
        putIfMissing(d, "ipMasq", !env.ipMasq()); // flannel masquerades itself when FLANNEL_IPMASQ=true
        putIfMissing(d, "mtu", GoNumber.of(env.mtu()));
        if ("bridge".equals(d.get("type"))) {
            putIfMissing(d, "isGateway", Boolean.TRUE);
        }
        if (!conf.cniVersion().isEmpty()) {
            d.put("cniVersion", conf.cniVersion());
        }
        d.put("ipam", ipam(conf, env));
        return d;
    }

    /** Go's {@code if !hasKey(m, k)}: a key present with a null value counts as present (unlike putIfAbsent). */
    private static void putIfMissing(Map<String, Object> m, String key, Object value) {
        if (!m.containsKey(key)) {
            m.put(key, value);
        }
    }

    private static Map<String, Object> ipam(FlannelNetConf conf, CniSubnetEnv env) throws CniException {
        Map<String, Object> ipam = conf.ipam() == null ? new LinkedHashMap<>() : new LinkedHashMap<>(conf.ipam());
        putIfMissing(ipam, "type", "host-local");
        List<Object> ranges = new ArrayList<>();
        if (env.subnet() != null) {
            ranges.add(List.of(Map.of("subnet", env.subnet())));
        }
        if (env.ipv6Subnet() != null) {
            ranges.add(List.of(Map.of("subnet", env.ipv6Subnet())));
        }
        ipam.put("ranges", ranges);
        List<Object> routes;
        try {
            routes = conf.ipam() != null && conf.ipam().containsKey("routes")
                ? Routes.normalise(conf.ipam().get("routes")) : new ArrayList<>();
        } catch (IllegalArgumentException e) {
            throw CniException.internal("failed to assemble Delegate IPAM: failed to read IPAM routes: failed to parse ipam.routes: "
                + e.getMessage());
        }
        for (String nw : env.networks()) {
            routes.add(new GoJsonWriter.Fields().with("dst", nw));
        }
        for (String nw : env.ipv6Networks()) {
            routes.add(new GoJsonWriter.Fields().with("dst", nw));
        }
        ipam.put("routes", routes);
        return ipam;
    }
}
