package org.jflannel.cni;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * User routes from {@code ipam.routes}, re-encoded as upstream's {@code types.Route} does:
 * fields {@code dst, gw, mtu, advmss, priority, table, scope} in that order, unknown keys dropped,
 * {@code dst} keeping its host bits. Messages are Go's (they follow
 * {@code failed to parse ipam.routes: }).
 */
final class Routes {

    private static final String[] INT_FIELDS = {"mtu", "advmss", "priority", "table", "scope"};

    private Routes() {
    }

    static List<Object> normalise(Object routes) {
        List<Object> out = new ArrayList<>();
        if (routes == null) {
            return out;
        }
        if (!(routes instanceof List<?> list)) {
            throw new IllegalArgumentException("json: cannot unmarshal " + GoDecode.kind(routes) + " into Go value of type []types.Route");
        }
        for (Object r : list) {
            out.add(route(r));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static GoJsonWriter.Fields route(Object r) {
        if (r == null) {
            return new GoJsonWriter.Fields().with("dst", "<nil>"); // Go: a zero IPNet prints as <nil>
        }
        if (!(r instanceof Map)) {
            throw new IllegalArgumentException("json: cannot unmarshal " + GoDecode.kind(r) + " into Go value of type types.route");
        }
        Map<String, Object> m = (Map<String, Object>) r;
        GoDecode d = new GoDecode("route");
        String dst = GoDecode.present(m, "dst") ? dst(GoDecode.field(m, "dst")) : "<nil>";
        String gw = gw(d, GoDecode.field(m, "gw"));
        Long[] ints = new Long[INT_FIELDS.length];
        for (int i = 0; i < INT_FIELDS.length; i++) {
            ints[i] = integer(d, m, INT_FIELDS[i]);
        }
        if (d.error() != null) {
            throw new IllegalArgumentException(d.error());
        }
        GoJsonWriter.Fields f = new GoJsonWriter.Fields().with("dst", dst);
        if (gw != null) {
            f.put("gw", gw);
        }
        for (int i = 0; i < INT_FIELDS.length; i++) {
            boolean pointer = i >= 3; // table and scope are *int: present even when 0
            if (ints[i] != null && (pointer || ints[i] != 0)) {
                f.put(INT_FIELDS[i], ints[i]);
            }
        }
        return f;
    }

    private static String dst(Object v) {
        if (v == null) {
            v = ""; // IPNet.UnmarshalJSON("null") parses ""
        }
        if (!(v instanceof String s)) {
            throw new IllegalArgumentException("json: cannot unmarshal " + GoDecode.kind(v) + " into Go value of type string");
        }
        return IpText.cidr(s);
    }

    private static String gw(GoDecode d, Object v) {
        if (v == null) {
            return null;
        }
        if (!(v instanceof String s)) {
            d.mismatch(v, "gw", "net.IP");
            return null;
        }
        return s.isEmpty() ? null : IpText.ip(s);
    }

    private static Long integer(GoDecode d, Map<String, Object> m, String name) {
        Object v = GoDecode.field(m, name);
        if (v == null) {
            return null;
        }
        if (!(v instanceof GoNumber n)) {
            d.mismatch(v, name, "int");
            return null;
        }
        String text = n.goText(); // the value went through float64 and back, as upstream re-marshals it
        Long value = new GoNumber(text).asInt();
        if (value == null) {
            d.fail("json: cannot unmarshal number " + text + " into Go struct field route." + name + " of type int");
        }
        return value;
    }
}
