package org.jflannel.subnet.etcd;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jflannel.core.ConfigException;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;

/**
 * Lease keys as upstream names them: {@code <prefix>/subnets/10.5.34.0-24} or
 * {@code <prefix>/subnets/10.5.34.0-24&fc00::-64} (REFERENCE §5.2). Parsing follows upstream's
 * {@code ParseSubnetKey}: its regex, found anywhere in the key; prefix lengths that fit 5 (IPv4) and
 * 7 (IPv6) bits, strict dotted quads.
 */
final class LeaseKeyCodec {
    /** Upstream's regex, verbatim (the unescaped dots are upstream's too). */
    static final Pattern KEY = Pattern.compile("(\\d+\\.\\d+.\\d+.\\d+)-(\\d+)(?:&([a-f\\d:]+)-(\\d+))?$");

    /** The subnets a key names; {@code ipv6} is null for an IPv4-only lease. */
    record Subnets(Ip4Net ipv4, Ip6Net ipv6) {
        Subnets {
            if (ipv4 == null) {
                throw new IllegalArgumentException("an etcd lease key always names an IPv4 subnet");
            }
        }
    }

    private LeaseKeyCodec() {
    }

    /** {@code 10.5.34.0-24} or {@code 10.5.34.0-24&fc00::-64} (the last path element of the key). */
    static String format(Ip4Net ipv4, Ip6Net ipv6) {
        String v4 = Ip4Net.formatAddress(ipv4.address()) + "-" + ipv4.prefixLength();
        return ipv6 == null ? v4 : v4 + "&" + Ip6Net.formatAddress(ipv6.high(), ipv6.low()) + "-" + ipv6.prefixLength();
    }

    /** Parses a full etcd key; a key upstream would skip is a {@link ConfigException} on field {@code key}. */
    static Subnets parse(String key) throws ConfigException {
        Matcher m = KEY.matcher(key);
        if (!m.find()) {
            throw bad(key, "not a subnet key (expected <a.b.c.d>-<len>[&<ipv6>-<len>])");
        }
        Ip4Net v4 = new Ip4Net(address4(key, m.group(1)), prefix(key, m.group(2), 31));
        if (m.group(3) == null) {
            return new Subnets(v4, null);
        }
        long[] a6;
        try {
            a6 = Ip6Net.parseAddress(m.group(3));
        } catch (IllegalArgumentException e) {
            throw bad(key, "invalid IPv6 address " + m.group(3));
        }
        return new Subnets(v4, new Ip6Net(a6[0], a6[1], prefix(key, m.group(4), 127)));
    }

    private static int address4(String key, String text) throws ConfigException {
        try {
            return Ip4Net.parseAddress(text);
        } catch (IllegalArgumentException e) {
            throw bad(key, "invalid IPv4 address " + text);
        }
    }

    private static int prefix(String key, String digits, int max) throws ConfigException {
        // Go's strconv.ParseUint(s, 10, bits): leading zeros fine, overflow of the bit size is an error
        String trimmed = digits.replaceFirst("^0+(?=\\d)", "");
        if (trimmed.length() > 3 || Integer.parseInt(trimmed) > max) {
            throw bad(key, "prefix length " + digits + " out of range 0.." + max);
        }
        return Integer.parseInt(trimmed);
    }

    private static ConfigException bad(String key, String why) {
        return new ConfigException("key", key + ": key: " + why);
    }
}
