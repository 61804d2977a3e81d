package org.jflannel.cni;

import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;

/**
 * Go's net.ParseIP / net.ParseCIDR and their String forms, for addresses the plugin re-encodes
 * (route destinations and gateways, result addresses). Unlike subnet.env values, these keep
 * their host bits ({@code 10.1.2.3/16} stays {@code 10.1.2.3/16}).
 */
final class IpText {

    private IpText() {
    }

    /** net.ParseIP then IP.String(); throws with {@code invalid IP address: <s>}. */
    static String ip(String s) {
        String f = formatIp(s);
        if (f == null) {
            throw new IllegalArgumentException("invalid IP address: " + s);
        }
        return f;
    }

    /** types.ParseCIDR (host bits kept) then IPNet.String(); throws with {@code invalid CIDR address: <s>}. */
    static String cidr(String s) {
        int slash = s.indexOf('/');
        String ip = slash < 0 ? null : formatIp(s.substring(0, slash));
        if (ip == null) {
            throw new IllegalArgumentException("invalid CIDR address: " + s);
        }
        String p = s.substring(slash + 1);
        boolean v6Text = s.substring(0, slash).indexOf(':') >= 0;
        int max = v6Text ? 128 : 32;
        int prefix = -1;
        if (!p.isEmpty() && p.length() <= 3) {
            prefix = 0;
            for (int i = 0; i < p.length() && prefix >= 0; i++) {
                char c = p.charAt(i);
                prefix = c >= '0' && c <= '9' ? prefix * 10 + (c - '0') : -1;
            }
        }
        if (prefix < 0 || prefix > max) {
            throw new IllegalArgumentException("invalid CIDR address: " + s);
        }
        if (v6Text && ip.indexOf(':') < 0) {
            prefix = Math.max(0, prefix - 96); // IPv4-mapped: Go prints the IPv4 form with the mask's last 4 bytes
        }
        return ip + "/" + prefix;
    }

    private static String ip4(int a) {
        return new StringBuilder(15).append(a >>> 24).append('.').append((a >>> 16) & 0xff).append('.')
            .append((a >>> 8) & 0xff).append('.').append(a & 0xff).toString();
    }

    /** The Go text of an IP literal, or null when Go would not parse it. */
    private static String formatIp(String s) {
        if (s.isEmpty() || s.indexOf('%') >= 0) {
            return null;
        }
        try {
            if (s.indexOf(':') < 0) {
                return ip4(Ip4Net.parseAddress(s));
            }
            long[] a = Ip6Net.parseAddress(s);
            if (a[0] == 0 && (a[1] >>> 32) == 0xffffL) {
                return ip4((int) a[1]);
            }
            return Ip6Net.formatAddress(a[0], a[1]);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
