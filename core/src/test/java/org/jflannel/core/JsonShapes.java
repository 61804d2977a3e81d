package org.jflannel.core;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;

/**
 * Generators of net-conf.json-shaped text: near-valid configs whose keys and values vary. They
 * draw from a {@link Random} directly (no shrinking): 100,000 tries must stay within seconds.
 */
final class JsonShapes {

    static final List<String> VALID = List.of(
            "{\"Network\": \"10.244.0.0/16\", \"Backend\": {\"Type\": \"vxlan\"}}",
            "{\"Network\":\"10.0.0.0/8\",\"SubnetLen\":20,\"SubnetMin\":\"10.10.0.0\",\"SubnetMax\":\"10.99.0.0\",\"Backend\":{\"Type\":\"udp\",\"Port\":7890}}",
            "{\"EnableIPv6\":true,\"Network\":\"10.42.0.0/16\",\"IPv6Network\":\"2001:cafe:42::/56\",\"Backend\":{\"Type\":\"vxlan\"}}",
            "{ \"EnableIPv6\": true, \"IPv6Network\": \"fc00::/48\", \"IPv6SubnetMin\": \"fc00:0:0:1::\", \"IPv6SubnetMax\": \"fc00:0:0:f::\", \"IPv6SubnetLen\": 124, \"enableIPv4\": false }",
            "{\"Network\":\"10.3.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"VNI\":4096,\"Port\":4789,\"MTU\":1500,\"GBP\":true,\"Learning\":false,\"DirectRouting\":true}}");

    private static final List<String> TOP_KEYS = List.of("Network", "SubnetLen", "SubnetMin", "SubnetMax", "EnableIPv4",
            "EnableIPv6", "IPv6Network", "IPv6SubnetLen", "IPv6SubnetMin", "IPv6SubnetMax", "EnableNFTables", "Backend");
    private static final List<String> BACKEND_KEYS = List.of("Type", "VNI", "Port", "MTU", "GBP", "Learning", "DirectRouting");
    private static final List<String> LITERALS = List.of("true", "false", "null", "0", "-1", "1", "24", "30", "31", "64", "124",
            "126", "127", "128", "65535", "65536", "16777215", "16777216", "2147483648", "4294967296", "18446744073709551615",
            "18446744073709551616", "-9223372036854775809", "1e400", "24.0", "2.4e1", "-0", "[]", "{}", "[1,\"a\",null]",
            "\"\"", "\"vxlan\"", "\"VXLAN\"", "\"udp\"", "\"host-gw\"", "\"0.0.0.0/0\"", "\"::/0\"", "\"::\"", "\"0.0.0.0\"",
            "\"fe80::1%eth0/64\"", "\"::ffff:10.0.0.0/104\"", "\"10.0.0.0/8,10.1.0.0/16\"", "\"10.3.5.0\"", "\"fc00:0:0:1::\"");
    private static final String JSON_ALPHABET = "{}[]\":,. -/0123456789abcdefABCDEF:xnulrtsNeEV\\";
    private static final String[] GROUPS = {"", "0", "1", "fc00", "ffff", "cafe", "10.0.0.1", "12345", "0000", "g"};

    private JsonShapes() {
    }

    /** Valid configs with 1..8 random character edits (insert, delete, replace, truncate). */
    static Arbitrary<String> mutatedValid() {
        return Arbitraries.randomValue(r -> {
            StringBuilder sb = new StringBuilder(VALID.get(r.nextInt(VALID.size())));
            for (int n = 1 + r.nextInt(8); n > 0; n--) {
                edit(sb, r);
            }
            return sb.toString();
        });
    }

    /** Objects of flannel's keys (random case) with values from a pool of interesting JSON. */
    static Arbitrary<String> structured() {
        return Arbitraries.randomValue(r -> object(r, TOP_KEYS, true));
    }

    private static String object(Random r, List<String> keys, boolean top) {
        StringBuilder sb = new StringBuilder("{");
        for (int n = r.nextInt(10); n > 0; n--) {
            if (sb.length() > 1) {
                sb.append(',');
            }
            String key = keys.get(r.nextInt(keys.size()));
            int spelling = r.nextInt(4);
            key = spelling == 1 ? key.toLowerCase() : spelling == 2 ? key.toUpperCase() : key;
            sb.append(quote(key)).append(':');
            boolean nested = top && (key.equalsIgnoreCase("Backend") ? r.nextInt(4) > 0 : r.nextInt(20) == 0);
            sb.append(nested ? object(r, BACKEND_KEYS, false) : value(r));
        }
        return sb.append('}').toString();
    }

    private static String value(Random r) {
        switch (r.nextInt(11)) {
            case 0, 1, 2:
                return LITERALS.get(r.nextInt(LITERALS.size()));
            case 3:
                return String.valueOf(r.nextInt());
            case 4, 5, 6:
                return quote(ipv4Cidr(r));
            case 7, 8, 9:
                return quote(ipv6Cidr(r));
            default:
                return quote(randomText(r, 20));
        }
    }

    static String ipv4Cidr(Random r) {
        String addr = r.nextInt(257) + "." + r.nextInt(257) + "." + r.nextInt(257) + "." + r.nextInt(257);
        return r.nextInt(6) == 0 ? addr : addr + "/" + r.nextInt(35);
    }

    static String ipv6Cidr(Random r) {
        StringBuilder sb = new StringBuilder();
        int groups = 1 + r.nextInt(9);
        int ellipsis = r.nextInt(10) - 1;
        for (int i = 0; i < groups; i++) {
            sb.append(i == ellipsis ? "::" : i > 0 ? ":" : "");
            sb.append(r.nextBoolean() ? Integer.toHexString(r.nextInt(0x10000)) : GROUPS[r.nextInt(GROUPS.length)]);
        }
        if (ellipsis >= groups) {
            sb.append("::");
        }
        return r.nextInt(6) == 0 ? sb.toString() : sb + "/" + r.nextInt(131);
    }

    static String randomText(Random r, int maxLength) {
        StringBuilder sb = new StringBuilder();
        for (int n = r.nextInt(maxLength + 1); n > 0; n--) {
            sb.append(r.nextInt(4) == 0 ? (char) r.nextInt(0x10000) : (char) (0x20 + r.nextInt(0x5f)));
        }
        return sb.toString();
    }

    static String quote(String s) {
        return "\"" + new String(JsonStringEncoder.getInstance().quoteAsString(s)) + "\"";
    }

    private static void edit(StringBuilder sb, Random r) {
        int at = r.nextInt(sb.length() + 1);
        char c = JSON_ALPHABET.charAt(r.nextInt(JSON_ALPHABET.length()));
        switch (r.nextInt(4)) {
            case 0 -> sb.insert(at, c);
            case 1 -> {
                if (at < sb.length()) {
                    sb.deleteCharAt(at);
                }
            }
            case 2 -> {
                if (at < sb.length()) {
                    sb.setCharAt(at, c);
                }
            }
            default -> sb.setLength(at);
        }
    }
}
