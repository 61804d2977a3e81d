package org.jflannel.core;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads net-conf.json as upstream's Go decoder does: keys match case-insensitively (the last of
 * two spellings wins), unknown keys are ignored, types are strict. Validation and defaults are
 * {@link NetConfRules}'.
 */
final class NetConfParser {
    private static final Logger LOG = LoggerFactory.getLogger(NetConfParser.class);
    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(JsonParser.Feature.AUTO_CLOSE_SOURCE)
            .build();

    private final String source;

    private NetConfParser(String source) {
        this.source = source;
    }

    static NetConf parse(String json, NetConf.Mode mode, String source) throws ConfigException {
        return new NetConfParser(source).parse(json, mode);
    }

    private NetConf parse(String json, NetConf.Mode mode) throws ConfigException {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw error("", "invalid JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject()) {
            throw error("", "expected a JSON object, got " + describe(root));
        }
        Map<String, JsonNode> f = fold(root);
        boolean v4 = bool(f, "EnableIPv4", true);
        boolean v6 = bool(f, "EnableIPv6", false);
        if (!v4 && !v6) {
            throw error("EnableIPv4", "none defined stack");
        }
        var raw = new NetConfRules.Raw(
                v4, v6,
                ip4Net(f, "Network"), uint(f, "SubnetLen"), ip4(f, "SubnetMin"), ip4(f, "SubnetMax"),
                ip6Net(f, "IPv6Network"), uint(f, "IPv6SubnetLen"), ip6(f, "IPv6SubnetMin"), ip6(f, "IPv6SubnetMax"));
        boolean nft = bool(f, "EnableNFTables", false);
        boolean defaulted = !f.containsKey("backend");
        BackendConfig backend = defaulted ? new BackendConfig.Udp(BackendConfig.Udp.DEFAULT_PORT) : backend(f.get("backend"));
        if (defaulted) {
            LOG.warn("{}: no Backend given, using udp as upstream flannel does; set \"Backend\": {{\"Type\": \"vxlan\"}} explicitly", source);
        }
        return NetConfRules.apply(raw, mode, nft, backend, defaulted, source);
    }

    private BackendConfig backend(JsonNode node) throws ConfigException {
        if (node == null || !node.isObject()) {
            if (node == null || node.isNull()) {
                throw error("Backend.Type", "unknown backend type: ");
            }
            throw error("Backend", "expected an object, got " + describe(node));
        }
        Map<String, JsonNode> b = fold(node);
        String type = string(b, "Type", "Backend.Type");
        if (type == null || type.isEmpty()) {
            throw error("Backend.Type", "unknown backend type: ");
        }
        switch (type.toLowerCase(Locale.ROOT)) {
            case "ipsec":
                return ipsec(b);
            case "vxlan":
                return new BackendConfig.Vxlan(
                        range(b, "VNI", BackendConfig.Vxlan.DEFAULT_VNI, 0, 0xFFFFFF),
                        range(b, "Port", 0, 0, 65535),
                        range(b, "MTU", 0, 0, 65535),
                        boolIn(b, "GBP", "Backend.GBP"),
                        boolIn(b, "Learning", "Backend.Learning"),
                        boolIn(b, "DirectRouting", "Backend.DirectRouting"));
            case "udp":
                return new BackendConfig.Udp(range(b, "Port", BackendConfig.Udp.DEFAULT_PORT, 1, 65535));
            case "host-gw":
                return new BackendConfig.HostGw();
            case "wireguard":
                return wireguard(b);
            case "alloc":
                return new BackendConfig.Alloc();
            case "ipip":
                return new BackendConfig.Ipip(boolIn(b, "DirectRouting", "Backend.DirectRouting"));
            case "extension":
                return new BackendConfig.Extension(
                        string(b, "PreStartupCommand", "Backend.PreStartupCommand"),
                        string(b, "PostStartupCommand", "Backend.PostStartupCommand"),
                        string(b, "SubnetAddCommand", "Backend.SubnetAddCommand"),
                        string(b, "SubnetRemoveCommand", "Backend.SubnetRemoveCommand"));
            default:
                throw error("Backend.Type", "backend " + type + " is not supported; supported: vxlan, udp, host-gw, wireguard, alloc, extension, ipip, ipsec");
        }
    }

    /**
     * upstream decodes the wireguard options into a Go struct after its defaults (ListenPort 51820,
     * ListenPortV6 51821, PersistentKeepaliveInterval 0, Mode separate): a wrongly typed value fails
     * as {@code error decoding backend config: json: cannot unmarshal …}; a bad Mode as {@code no
     * valid Mode configured}, a bad PSK as {@code could not parse PSK: …} (upstream finds those two
     * at registration; we at parse time, so etcd and kube mode refuse the same file the same way).
     * Ports outside 1..65535 and a negative keepalive, which upstream hands to the kernel, are
     * refused here.
     */
    private BackendConfig.Wireguard wireguard(Map<String, JsonNode> b) throws ConfigException {
        int port = goInt(b, "ListenPort", BackendConfig.Wireguard.DEFAULT_LISTEN_PORT);
        int port6 = goInt(b, "ListenPortV6", BackendConfig.Wireguard.DEFAULT_LISTEN_PORT_V6);
        int mtu = goInt(b, "MTU", 0);
        long keepalive = goInt64(b, "PersistentKeepaliveInterval", 0);
        String psk = goString(b, "PSK", "");
        String mode = goString(b, "Mode", BackendConfig.WireguardMode.SEPARATE.text());
        if (port < 1 || port > 65535) {
            throw error("Backend.ListenPort", "expected 1..65535, got " + port);
        }
        if (port6 < 1 || port6 > 65535) {
            throw error("Backend.ListenPortV6", "expected 1..65535, got " + port6);
        }
        if (mtu < 0 || mtu > 65535) {
            throw error("Backend.MTU", "expected 0..65535 (0: the interface's MTU), got " + mtu);
        }
        if (keepalive < 0 || keepalive > 65535) {
            // the kernel's and wireguard-go's field is a u16 of seconds
            throw error("Backend.PersistentKeepaliveInterval", "expected 0..65535 seconds, got " + keepalive);
        }
        BackendConfig.WireguardMode m = BackendConfig.WireguardMode.of(mode).orElseThrow(() ->
                error("Backend.Mode", "no valid Mode configured (got \"" + mode + "\"; expected separate, auto, ipv4 or ipv6)"));
        return new BackendConfig.Wireguard(port, port6, mtu, psk.isEmpty() ? null : wgKey(psk), keepalive, m);
    }

    /**
     * upstream's ipsec.go: defaults UDPEncap false and ESPProposal {@code aes128gcm16-sha256-prfsha256-ecp256},
     * then {@code config error, password is too short} when the PSK has fewer than 96 bytes (Go's len).
     * The proposal is not checked here (upstream never checks it; the backend asks charon at start).
     */
    private BackendConfig.Ipsec ipsec(Map<String, JsonNode> b) throws ConfigException {
        String psk = goString(b, "PSK", "");
        boolean encap = boolIn(b, "UDPEncap", "Backend.UDPEncap");
        String esp = goString(b, "ESPProposal", BackendConfig.Ipsec.DEFAULT_ESP_PROPOSAL);
        int len = psk.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (len < BackendConfig.Ipsec.MIN_PSK_LENGTH) {
            throw error("Backend.PSK", "config error, password is too short (" + len + " characters; at least "
                    + BackendConfig.Ipsec.MIN_PSK_LENGTH + " needed)");
        }
        return new BackendConfig.Ipsec(psk, encap, esp);
    }

    /** wgtypes.ParseKey: standard base64 (with padding) of exactly 32 bytes. */
    private byte[] wgKey(String text) throws ConfigException {
        byte[] key;
        try {
            key = java.util.Base64.getDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            throw error("Backend.PSK", "could not parse PSK: wgtypes: failed to parse base64-encoded key: illegal base64 data at input byte "
                    + badBase64At(text));
        }
        if (key.length != 32) {
            throw error("Backend.PSK", "could not parse PSK: wgtypes: incorrect key size: " + key.length);
        }
        return key;
    }

    /** Where Go's decoder gives up: the first byte outside the alphabet, else the end of the last whole quantum. */
    private static int badBase64At(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/'
                    || (c == '=' && i >= text.length() - 2);
            if (!ok) {
                return i;
            }
        }
        return text.length() - text.length() % 4;
    }

    private int goInt(Map<String, JsonNode> b, String key, int dflt) throws ConfigException {
        long v = goInt64(b, key, dflt);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw error("Backend." + key, "expected 1..65535, got " + v);
        }
        return (int) v;
    }

    /** A Go int/int64/time.Duration field: a JSON integer; null keeps the default, as Go's decoder does. */
    private long goInt64(Map<String, JsonNode> b, String key, long dflt) throws ConfigException {
        JsonNode n = b.get(key.toLowerCase(Locale.ROOT));
        if (n == null || n.isNull()) {
            return dflt;
        }
        if (!n.isIntegralNumber() || !n.canConvertToLong()) {
            String what = n.isNumber() ? "number " + n.asText() : goJsonType(n);
            throw error("Backend." + key, "error decoding backend config: json: cannot unmarshal " + what
                    + " into Go struct field ." + key + " of type " + (key.equals("PersistentKeepaliveInterval") ? "time.Duration" : "int"));
        }
        return n.longValue();
    }

    private String goString(Map<String, JsonNode> b, String key, String dflt) throws ConfigException {
        JsonNode n = b.get(key.toLowerCase(Locale.ROOT));
        if (n == null || n.isNull()) {
            return dflt;
        }
        if (!n.isTextual()) {
            throw error("Backend." + key, "error decoding backend config: json: cannot unmarshal " + goJsonType(n)
                    + " into Go struct field ." + key + " of type " + (key.equals("Mode") ? "wireguard.Mode" : "string"));
        }
        return n.textValue();
    }

    /** encoding/json's name for a JSON value's kind in its UnmarshalTypeError. */
    private static String goJsonType(JsonNode n) {
        if (n.isTextual()) {
            return "string";
        }
        if (n.isBoolean()) {
            return "bool";
        }
        if (n.isArray()) {
            return "array";
        }
        if (n.isObject()) {
            return "object";
        }
        return "number";
    }

    /** Folded key → value; a later spelling of the same key wins, as in Go. */
    private static Map<String, JsonNode> fold(JsonNode object) {
        Map<String, JsonNode> m = new HashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            m.put(foldKey(e.getKey()), e.getValue());
        }
        return m;
    }

    /**
     * Go's case-insensitive match against ASCII field names: ASCII letters fold to lower case, and
     * so do the two non-ASCII letters Unicode folds onto ASCII ones, KELVIN SIGN (to k) and LONG S
     * (to s). Nothing else folds (String.toLowerCase would turn U+0130 into "i" plus a dot).
     */
    static String foldKey(String key) {
        StringBuilder sb = new StringBuilder(key.length());
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c >= 'A' && c <= 'Z') {
                c = (char) (c + ('a' - 'A'));
            } else if (c == '\u212A') {
                c = 'k';
            } else if (c == '\u017F') {
                c = 's';
            }
            sb.append(c);
        }
        return sb.toString();
    }

    private boolean bool(Map<String, JsonNode> f, String key, boolean dflt) throws ConfigException {
        JsonNode n = f.get(key.toLowerCase(Locale.ROOT));
        if (n == null || n.isNull()) {
            return dflt;
        }
        if (!n.isBoolean()) {
            throw error(key, "expected true or false, got " + describe(n));
        }
        return n.booleanValue();
    }

    private boolean boolIn(Map<String, JsonNode> b, String key, String field) throws ConfigException {
        JsonNode n = b.get(key.toLowerCase(Locale.ROOT));
        if (n == null || n.isNull()) {
            return false;
        }
        if (!n.isBoolean()) {
            throw error(field, "expected true or false, got " + describe(n));
        }
        return n.booleanValue();
    }

    private int range(Map<String, JsonNode> b, String key, int dflt, int min, int max) throws ConfigException {
        JsonNode n = b.get(key.toLowerCase(Locale.ROOT));
        if (n == null || n.isNull()) {
            return dflt;
        }
        if (!n.isIntegralNumber() || !n.canConvertToLong() || n.longValue() < min || n.longValue() > max) {
            throw error("Backend." + key, "expected " + min + ".." + max + ", got " + describe(n));
        }
        return n.intValue();
    }

    private int uint(Map<String, JsonNode> f, String key) throws ConfigException {
        JsonNode n = f.get(key.toLowerCase(Locale.ROOT));
        if (n == null || n.isNull()) {
            return 0;
        }
        // Go's uint is 64 bits wide: any value up to 2^64-1 decodes, and the rules then reject
        // lengths beyond 30 / 126 with upstream's own messages
        if (!n.isIntegralNumber() || n.bigIntegerValue().signum() < 0 || n.bigIntegerValue().bitLength() > 64) {
            throw error(key, "expected an unsigned integer, got " + describe(n));
        }
        return n.canConvertToInt() ? n.intValue() : Integer.MAX_VALUE;
    }

    private String string(Map<String, JsonNode> f, String key, String field) throws ConfigException {
        JsonNode n = f.get(key.toLowerCase(Locale.ROOT));
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isTextual()) {
            throw error(field, "expected a string, got " + describe(n));
        }
        return n.textValue();
    }

    /**
     * Network is decoded by its own UnmarshalJSON in upstream, which Go calls for a JSON null as
     * well: {@code "Network": null} fails as {@code invalid CIDR address: null}, even with IPv4 off.
     */
    private Ip4Net ip4Net(Map<String, JsonNode> f, String key) throws ConfigException {
        String s = explicitNull(f, key) ? "null" : string(f, key, key);
        if (s == null) {
            return null;
        }
        try {
            return Ip4Net.parse(s);
        } catch (IllegalArgumentException e) {
            // upstream: a valid CIDR of the other family is refused with its own message
            throw error(key, parsesAsIpv6(s) ? "invalid IPv4 CIDR format" : "invalid CIDR address: " + s);
        }
    }

    private static boolean parsesAsIpv6(String cidr) {
        try {
            Ip6Net.parse(cidr);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private Ip6Net ip6Net(Map<String, JsonNode> f, String key) throws ConfigException {
        String s = explicitNull(f, key) ? "null" : string(f, key, key);
        if (s == null) {
            return null;
        }
        try {
            return Ip6Net.parse(s);
        } catch (IllegalArgumentException e) {
            throw error(key, "invalid CIDR address: " + s);
        }
    }

    /** SubnetMin/Max: an ip.IP4 with its own UnmarshalJSON upstream, so null is an error there too. */
    private Integer ip4(Map<String, JsonNode> f, String key) throws ConfigException {
        String s = explicitNull(f, key) ? "null" : string(f, key, key);
        if (s == null) {
            return null;
        }
        try {
            return Ip4Net.parseAddress(s);
        } catch (IllegalArgumentException e) {
            throw error(key, "invalid IPv4 address: " + s);
        }
    }

    private static boolean explicitNull(Map<String, JsonNode> f, String key) {
        JsonNode n = f.get(key.toLowerCase(Locale.ROOT));
        return n != null && n.isNull();
    }

    /** IPv6SubnetMin/Max are pointers upstream: null leaves them unset. */
    private long[] ip6(Map<String, JsonNode> f, String key) throws ConfigException {
        String s = string(f, key, key);
        if (s == null) {
            return null;
        }
        try {
            return Ip6Net.parseAddress(s);
        } catch (IllegalArgumentException e) {
            throw error(key, "invalid IPv6 address: " + s);
        }
    }

    static String describe(JsonNode n) {
        if (n == null || n.isMissingNode()) {
            return "nothing";
        }
        String text = n.toString();
        return text.length() > 60 ? text.substring(0, 57) + "..." : text;
    }

    private ConfigException error(String field, String message) {
        return new ConfigException(field, source + ": " + (field.isEmpty() ? "" : field + ": ") + message);
    }
}
