package org.jflannel.subnet.etcd;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import org.jflannel.core.ConfigException;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.LeaseAttrs;

/**
 * Lease values as upstream's {@code json.Marshal(lease.LeaseAttrs)} writes them (REFERENCE §5.2):
 * {@code {"PublicIP":"192.168.64.3","PublicIPv6":null,"BackendType":"vxlan","BackendData":{...}}},
 * field order as declared upstream, {@code BackendType}/{@code BackendData}/{@code BackendV6Data}
 * omitted when empty, backend data embedded as compact raw JSON.
 *
 * <p>Reading follows Go's decoder: field names match case-insensitively, the last duplicate wins,
 * unknown fields are ignored; the backend data is kept as the raw JSON text it was written as.
 */
final class LeaseValueCodec {
    private static final JsonFactory JSON = JsonFactory.builder().build();

    private LeaseValueCodec() {
    }

    /** The value upstream would write for {@code attrs}; an IPv6-only node writes {@code "0.0.0.0"} as upstream's zero IP4. */
    static String format(LeaseAttrs attrs) {
        StringBuilder sb = new StringBuilder(160).append("{\"PublicIP\":\"");
        sb.append(attrs.publicIp() == null ? "0.0.0.0" : attrs.publicIp().getHostAddress()).append('"');
        sb.append(",\"PublicIPv6\":");
        if (attrs.publicIpv6() == null) {
            sb.append("null");
        } else {
            Ip6Net a = Ip6Net.of(attrs.publicIpv6(), 128);
            sb.append('"').append(Ip6Net.formatAddress(a.high(), a.low())).append('"');
        }
        if (!attrs.backendType().isEmpty()) {
            sb.append(",\"BackendType\":");
            GoJson.quote(attrs.backendType(), sb);
        }
        if (attrs.backendData() != null && !attrs.backendData().isEmpty()) {
            sb.append(",\"BackendData\":");
            GoJson.compact(attrs.backendData(), sb);
        }
        if (attrs.backendV6Data() != null && !attrs.backendV6Data().isEmpty()) {
            sb.append(",\"BackendV6Data\":");
            GoJson.compact(attrs.backendV6Data(), sb);
        }
        return sb.append('}').toString();
    }

    /** Parses a lease value stored under {@code key}; anything upstream would reject is a {@link ConfigException} naming the field. */
    static LeaseAttrs parse(String key, String json) throws ConfigException {
        try (JsonParser p = JSON.createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw bad(key, "value", "expected a JSON object");
            }
            Fields f = new Fields();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                p.nextToken();
                readField(key, name, p, json, f);
            }
            if (p.nextToken() != null) {
                throw bad(key, "value", "unexpected data after the JSON object");
            }
            return new LeaseAttrs(f.publicIp, f.publicIpv6, f.backendType, f.backendData, f.backendV6Data);
        } catch (IOException | RuntimeException e) { // Jackson's parse errors and its nesting/size limits
            throw bad(key, "value", "invalid JSON: " + firstLine(e.getMessage()));
        }
    }

    /** What has been read so far; Go's decoder lets the last occurrence of a field win. */
    private static final class Fields {
        /**
         * Go's zero ip.IP4 when the field is absent, as upstream reads it, and as {@link #format} writes a
         * lease without one: absent had read as null, so such a lease came back from our own writer
         * changed (found by EtcdLeaseFuzzTest).
         */
        Inet4Address publicIp = Ip4Net.toInet(0);
        Inet6Address publicIpv6;
        String backendType = "";
        String backendData;
        String backendV6Data;
    }

    private static void readField(String key, String name, JsonParser p, String json, Fields f)
            throws IOException, ConfigException {
        if (name.equalsIgnoreCase("PublicIP")) {
            f.publicIp = Ip4Net.toInet(address4(key, p));
        } else if (name.equalsIgnoreCase("PublicIPv6")) {
            f.publicIpv6 = p.currentToken() == JsonToken.VALUE_NULL ? null : address6(key, p);
        } else if (name.equalsIgnoreCase("BackendType")) {
            if (p.currentToken() == JsonToken.VALUE_STRING) {
                f.backendType = p.getText();
            } else if (p.currentToken() != JsonToken.VALUE_NULL) {
                throw bad(key, "BackendType", "expected a string, got " + p.currentToken().asString());
            }
        } else if (name.equalsIgnoreCase("BackendData")) {
            f.backendData = raw(p, json);
        } else if (name.equalsIgnoreCase("BackendV6Data")) {
            f.backendV6Data = raw(p, json);
        } else {
            p.skipChildren(); // unknown fields are ignored, as by Go's decoder
        }
    }

    private static int address4(String key, JsonParser p) throws IOException, ConfigException {
        if (p.currentToken() != JsonToken.VALUE_STRING) {
            throw bad(key, "PublicIP", "expected an IPv4 address string, got " + describe(p));
        }
        String text = p.getText();
        try {
            return Ip4Net.parseAddress(text.startsWith("::ffff:") ? text.substring(7) : text);
        } catch (IllegalArgumentException e) {
            throw bad(key, "PublicIP", "invalid IPv4 address \"" + text + "\"");
        }
    }

    private static Inet6Address address6(String key, JsonParser p) throws IOException, ConfigException {
        if (p.currentToken() != JsonToken.VALUE_STRING) {
            throw bad(key, "PublicIPv6", "expected an IPv6 address string, got " + describe(p));
        }
        String text = p.getText();
        try {
            long[] a = Ip6Net.parseAddress(text);
            return Ip6Net.toInet(a[0], a[1]);
        } catch (IllegalArgumentException e) {
            throw bad(key, "PublicIPv6", "invalid IPv6 address \"" + text + "\"");
        }
    }

    /** The value's JSON text as written (objects and arrays verbatim); null for JSON null. */
    private static String raw(JsonParser p, String json) throws IOException {
        JsonToken t = p.currentToken();
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
            int start = (int) p.currentTokenLocation().getCharOffset();
            p.skipChildren();
            int end = (int) p.currentLocation().getCharOffset();
            return json.substring(start, end);
        }
        if (t == JsonToken.VALUE_STRING) {
            StringBuilder sb = new StringBuilder();
            GoJson.quote(p.getText(), sb);
            return sb.toString();
        }
        return p.getText(); // numbers as written, true, false
    }

    private static String describe(JsonParser p) throws IOException {
        JsonToken t = p.currentToken();
        if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
            p.skipChildren();
            return t == JsonToken.START_OBJECT ? "an object" : "an array";
        }
        return t.asString() == null ? p.getText() : t.asString().equals("null") ? "null" : p.getText();
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    private static ConfigException bad(String key, String field, String why) {
        return new ConfigException(field, key + ": " + field + ": " + why);
    }
}
