package org.jflannel.cni;

import java.util.List;
import java.util.Map;

/**
 * Decoding a parsed JSON object into a Go struct's fields, with Go's rules: a key matches a field
 * exactly or case-insensitively (the last matching key wins), null leaves the field as it was,
 * and a value of the wrong type is remembered as the first
 * {@code json: cannot unmarshal <kind> into Go struct field <Struct>.<path> of type <type>} error
 * while decoding goes on, as encoding/json does.
 */
final class GoDecode {

    static final String MAP_TYPE = "map[string]interface {}";

    private final String struct;
    private String firstError;

    GoDecode(String struct) {
        this.struct = struct;
    }

    /** The first type error, or null. */
    String error() {
        return firstError;
    }

    /** True when some key matches {@code field}, even with a null value (Go's hasKey on a map is exact; this is for structs). */
    static boolean present(Map<String, Object> obj, String field) {
        for (String k : obj.keySet()) {
            if (k.equalsIgnoreCase(field)) {
                return true;
            }
        }
        return false;
    }

    /** The value of the last key matching {@code field}, or null. */
    static Object field(Map<String, Object> obj, String field) {
        Object found = null;
        for (Map.Entry<String, Object> e : obj.entrySet()) {
            if (e.getKey().equalsIgnoreCase(field)) {
                found = e.getValue();
            }
        }
        return found;
    }

    static String kind(Object v) {
        if (v instanceof String) {
            return "string";
        }
        if (v instanceof GoNumber) {
            return "number";
        }
        if (v instanceof Boolean) {
            return "bool";
        }
        if (v instanceof List) {
            return "array";
        }
        return "object";
    }

    void mismatch(Object value, String path, String type) {
        mismatch(value, struct, path, type);
    }

    void mismatch(Object value, String structName, String path, String type) {
        if (firstError == null) {
            firstError = "json: cannot unmarshal " + kind(value) + " into Go struct field " + structName + "." + path + " of type " + type;
        }
    }

    void fail(String message) {
        if (firstError == null) {
            firstError = message;
        }
    }

    /** A string field; {@code dflt} when absent or null. */
    String string(Map<String, Object> obj, String name, String dflt) {
        Object v = field(obj, name);
        if (v == null) {
            return dflt;
        }
        if (!(v instanceof String s)) {
            mismatch(v, name, "string");
            return dflt;
        }
        return s;
    }

    /** A map[string]interface{} field; null when absent or null. */
    @SuppressWarnings("unchecked")
    Map<String, Object> map(Map<String, Object> obj, String name) {
        Object v = field(obj, name);
        if (v == null) {
            return null;
        }
        if (!(v instanceof Map)) {
            mismatch(v, name, MAP_TYPE);
            return null;
        }
        checkNumbers(v, name);
        return (Map<String, Object>) v;
    }

    /** Go refuses numbers beyond float64 inside interface{} values. */
    private void checkNumbers(Object v, String path) {
        if (v instanceof GoNumber n && Double.isInfinite(n.value())) {
            fail("json: cannot unmarshal number " + n.text() + " into Go struct field " + struct + "." + path + " of type float64");
        } else if (v instanceof Map<?, ?> m) {
            for (Object e : m.values()) {
                checkNumbers(e, path);
            }
        } else if (v instanceof List<?> l) {
            for (Object e : l) {
                checkNumbers(e, path);
            }
        }
    }

    /** A []string field (dns.nameservers and friends): checks types only. */
    void stringList(Map<String, Object> obj, String name, String structName, String path) {
        Object v = field(obj, name);
        if (v == null) {
            return;
        }
        if (!(v instanceof List<?> l)) {
            mismatch(v, structName, path, "[]string");
            return;
        }
        for (Object e : l) {
            if (e != null && !(e instanceof String)) {
                mismatch(e, structName, path, "string");
            }
        }
    }
}
