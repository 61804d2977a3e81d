package org.jflannel.cni;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A delegate's ADD result, decoded in its own version and printed again in that version
 * (REFERENCE §11.8), as upstream's invoke + types packages do: unknown keys dropped, addresses
 * in Go's text form, MarshalIndent with 4 spaces and no trailing newline.
 */
final class Results {

    private Results() {
    }

    /** invoke's fixupResultVersion + create.Create + Result.Print, as bytes for stdout. */
    static byte[] reprint(String configVersion, byte[] stdout) throws CniException {
        Object tree;
        try {
            tree = GoJson.parse(stdout);
        } catch (GoJson.SyntaxException e) {
            throw CniException.internal("failed to unmarshal raw result: " + e.getMessage());
        }
        if (tree != null && !(tree instanceof Map)) {
            throw CniException.internal("failed to unmarshal raw result: json: cannot unmarshal " + GoDecode.kind(tree)
                + " into Go value of type map[string]interface {}");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> raw = tree == null ? new LinkedHashMap<>() : (Map<String, Object>) tree;
        Object v = raw.get("cniVersion");
        if (v == null || "".equals(v)) {
            v = configVersion;
            raw.put("cniVersion", v);
        }
        if (!(v instanceof String version)) {
            throw CniException.internal("failed to find cniVersion in result");
        }
        try {
            return GoJsonWriter.indent(convert(version, raw));
        } catch (IllegalArgumentException e) {
            throw CniException.internal(e.getMessage());
        }
    }

    static Object convert(String version, Map<String, Object> raw) {
        switch (version) {
            case "0.1.0", "0.2.0" -> {
                return v020(version, raw);
            }
            case "0.3.0", "0.3.1", "0.4.0" -> {
                return v040(version, raw);
            }
            case "1.0.0", "1.1.0" -> {
                return v100(version, raw);
            }
            default -> throw new IllegalArgumentException("unsupported CNI result version " + GoText.quote(version));
        }
    }

    private static GoJsonWriter.Fields v020(String version, Map<String, Object> raw) {
        GoJsonWriter.Fields out = new GoJsonWriter.Fields().with("cniVersion", version);
        for (String family : new String[] {"ip4", "ip6"}) {
            Map<String, Object> ip = object(GoDecode.field(raw, family), family);
            if (ip != null) {
                GoJsonWriter.Fields f = new GoJsonWriter.Fields().with("ip", cidrOrNil(GoDecode.field(ip, "ip")));
                putIp(f, "gateway", GoDecode.field(ip, "gateway"));
                List<Object> routes = Routes.normalise(GoDecode.field(ip, "routes"));
                if (!routes.isEmpty()) {
                    f.put("routes", routes);
                }
                out.put(family, f);
            }
        }
        out.put("dns", dns(GoDecode.field(raw, "dns"), false));
        return out;
    }

    private static GoJsonWriter.Fields v040(String version, Map<String, Object> raw) {
        GoJsonWriter.Fields out = new GoJsonWriter.Fields().with("cniVersion", version);
        List<Object> interfaces = new ArrayList<>();
        for (Map<String, Object> i : objects(GoDecode.field(raw, "interfaces"), "interfaces")) {
            GoJsonWriter.Fields f = new GoJsonWriter.Fields().with("name", str(i, "name"));
            putNonEmpty(f, "mac", str(i, "mac"));
            putNonEmpty(f, "sandbox", str(i, "sandbox"));
            interfaces.add(f);
        }
        putNonEmpty(out, "interfaces", interfaces);
        List<Object> ips = new ArrayList<>();
        for (Map<String, Object> i : objects(GoDecode.field(raw, "ips"), "ips")) {
            GoJsonWriter.Fields f = new GoJsonWriter.Fields().with("version", str(i, "version"));
            putInt(f, "interface", GoDecode.field(i, "interface"), true);
            f.put("address", cidrOrNil(GoDecode.field(i, "address")));
            putIp(f, "gateway", GoDecode.field(i, "gateway"));
            ips.add(f);
        }
        putNonEmpty(out, "ips", ips);
        putNonEmpty(out, "routes", Routes.normalise(GoDecode.field(raw, "routes")));
        out.put("dns", dns(GoDecode.field(raw, "dns"), false));
        return out;
    }

    /** 1.0.0 and 1.1.0: keys sorted at every level (plain maps), dns omitted when empty. */
    private static Map<String, Object> v100(String version, Map<String, Object> raw) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("cniVersion", version);
        List<Object> interfaces = new ArrayList<>();
        for (Map<String, Object> i : objects(GoDecode.field(raw, "interfaces"), "interfaces")) {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("name", str(i, "name"));
            putNonEmpty(f, "mac", str(i, "mac"));
            putInt(f, "mtu", GoDecode.field(i, "mtu"), false);
            putNonEmpty(f, "sandbox", str(i, "sandbox"));
            putNonEmpty(f, "socketPath", str(i, "socketPath"));
            putNonEmpty(f, "pciID", str(i, "pciID"));
            interfaces.add(f);
        }
        putNonEmpty(out, "interfaces", interfaces);
        List<Object> ips = new ArrayList<>();
        for (Map<String, Object> i : objects(GoDecode.field(raw, "ips"), "ips")) {
            Map<String, Object> f = new LinkedHashMap<>();
            putInt(f, "interface", GoDecode.field(i, "interface"), true);
            f.put("address", cidrOrNil(GoDecode.field(i, "address")));
            putIp(f, "gateway", GoDecode.field(i, "gateway"));
            ips.add(f);
        }
        putNonEmpty(out, "ips", ips);
        List<Object> routes = new ArrayList<>();
        for (Object r : Routes.normalise(GoDecode.field(raw, "routes"))) {
            routes.add(new LinkedHashMap<>((Map<?, ?>) r)); // sorted, not in field order
        }
        putNonEmpty(out, "routes", routes);
        Map<String, Object> dns = dns(GoDecode.field(raw, "dns"), true);
        if (!dns.isEmpty()) {
            out.put("dns", dns);
        }
        return out;
    }

    private static Map<String, Object> dns(Object value, boolean sorted) {
        Map<String, Object> out = sorted ? new LinkedHashMap<>() : new GoJsonWriter.Fields();
        Map<String, Object> d = object(value, "dns");
        if (d == null) {
            return out;
        }
        for (String key : new String[] {"nameservers", "domain", "search", "options"}) {
            Object v = GoDecode.field(d, key);
            if (key.equals("domain")) {
                putNonEmpty(out, key, v == null ? "" : v);
            } else if (v instanceof List<?> l && !l.isEmpty()) {
                out.put(key, l);
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object v, String what) {
        if (v == null) {
            return null;
        }
        if (!(v instanceof Map)) {
            throw new IllegalArgumentException("json: cannot unmarshal " + GoDecode.kind(v) + " into Go struct field Result." + what);
        }
        return (Map<String, Object>) v;
    }

    private static List<Map<String, Object>> objects(Object v, String what) {
        List<Map<String, Object>> out = new ArrayList<>();
        if (v == null) {
            return out;
        }
        if (!(v instanceof List<?> l)) {
            throw new IllegalArgumentException("json: cannot unmarshal " + GoDecode.kind(v) + " into Go struct field Result." + what);
        }
        for (Object e : l) {
            Map<String, Object> m = object(e, what);
            out.add(m == null ? Map.of() : m);
        }
        return out;
    }

    private static String str(Map<String, Object> m, String key) {
        Object v = GoDecode.field(m, key);
        if (v == null) {
            return "";
        }
        if (!(v instanceof String s)) {
            throw new IllegalArgumentException("json: cannot unmarshal " + GoDecode.kind(v) + " into Go struct field ." + key + " of type string");
        }
        return s;
    }

    private static String cidrOrNil(Object v) {
        if (!(v instanceof String s)) {
            return "<nil>";
        }
        return IpText.cidr(s);
    }

    private static void putIp(Map<String, Object> f, String key, Object v) {
        if (v instanceof String s && !s.isEmpty()) {
            f.put(key, IpText.ip(s));
        }
    }

    private static void putInt(Map<String, Object> f, String key, Object v, boolean pointer) {
        if (v instanceof GoNumber n) {
            Long value = n.asInt();
            if (value == null) {
                throw new IllegalArgumentException("json: cannot unmarshal number " + n.text() + " into Go struct field ." + key + " of type int");
            }
            if (pointer || value != 0) {
                f.put(key, value);
            }
        }
    }

    private static void putNonEmpty(Map<String, Object> f, String key, Object v) {
        if (v instanceof String s && !s.isEmpty() || v instanceof List<?> l && !l.isEmpty()) {
            f.put(key, v);
        }
    }
}
