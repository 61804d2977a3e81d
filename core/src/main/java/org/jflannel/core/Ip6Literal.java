package org.jflannel.core;

/**
 * IPv6 text, as Go's {@code net/netip} reads and writes it. Hand-written rather than
 * {@code InetAddress.getByName}, which falls back to a DNS lookup for some inputs and accepts
 * zones, brackets and IPv4-compatible forms that Go rejects; this class only ever parses literals.
 */
final class Ip6Literal {

    private Ip6Literal() {
    }

    /**
     * Parses {@code text} into 16 bytes, or returns null when it is not a valid literal: groups of
     * 1–4 hex digits, at most one {@code ::} standing for at least one zero group, an optional dotted
     * IPv4 tail in the last 32 bits, no zone, no brackets.
     */
    static byte[] parse(String text) {
        byte[] ip = new byte[16];
        int ellipsis = -1;
        int pos = 0;
        int n = text.length();
        if (n >= 2 && text.charAt(0) == ':' && text.charAt(1) == ':') {
            ellipsis = 0;
            pos = 2;
            if (pos == n) {
                return ip;
            }
        }
        int i = 0;
        while (i < 16) {
            int start = pos;
            int acc = 0;
            while (pos < n) {
                int d = hex(text.charAt(pos));
                if (d < 0) {
                    break;
                }
                if (pos - start >= 4) {
                    return null; // more than four hex digits in a group
                }
                acc = (acc << 4) | d;
                pos++;
            }
            if (pos == start) {
                return null; // empty group
            }
            if (pos < n && text.charAt(pos) == '.') {
                // an embedded IPv4 address: only as the final 32 bits
                if ((ellipsis < 0 && i != 12) || i + 4 > 16) {
                    return null;
                }
                int v4;
                try {
                    v4 = Ip4Net.parseAddress(text.substring(start));
                } catch (IllegalArgumentException e) {
                    return null;
                }
                ip[i] = (byte) (v4 >>> 24);
                ip[i + 1] = (byte) (v4 >>> 16);
                ip[i + 2] = (byte) (v4 >>> 8);
                ip[i + 3] = (byte) v4;
                i += 4;
                pos = n;
                break;
            }
            ip[i] = (byte) (acc >>> 8);
            ip[i + 1] = (byte) acc;
            i += 2;
            if (pos == n) {
                break;
            }
            if (text.charAt(pos) != ':' || pos + 1 == n) {
                return null; // unexpected character, or a trailing single colon
            }
            pos++;
            if (text.charAt(pos) == ':') {
                if (ellipsis >= 0) {
                    return null; // a second "::"
                }
                ellipsis = i;
                pos++;
                if (pos == n) {
                    break;
                }
            }
        }
        if (pos != n) {
            return null; // trailing garbage
        }
        if (i < 16) {
            if (ellipsis < 0) {
                return null; // too short
            }
            int shift = 16 - i;
            for (int j = i - 1; j >= ellipsis; j--) {
                ip[j + shift] = ip[j];
            }
            for (int j = ellipsis; j < ellipsis + shift; j++) {
                ip[j] = 0;
            }
        } else if (ellipsis >= 0) {
            return null; // "::" must stand for at least one zero group
        }
        return ip;
    }

    private static int hex(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }

    /**
     * Formats as Go's netip does (RFC 5952): lower case, no leading zeros, the longest run of two or
     * more zero groups (the first of equal runs) compressed to {@code ::}; an IPv4-mapped address
     * as {@code ::ffff:a.b.c.d}.
     */
    static String format(long high, long low) {
        if (high == 0 && (low >>> 32) == 0xffffL) {
            return "::ffff:" + Ip4Net.formatAddress((int) low);
        }
        int[] g = new int[8];
        for (int i = 0; i < 4; i++) {
            g[i] = (int) (high >>> (48 - 16 * i)) & 0xffff;
            g[i + 4] = (int) (low >>> (48 - 16 * i)) & 0xffff;
        }
        int bestStart = -1;
        int bestLen = 1; // a single zero group is not compressed
        for (int i = 0; i < 8; ) {
            if (g[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && g[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestStart = i;
                bestLen = j - i;
            }
            i = j;
        }
        StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(g[i]));
        }
        return sb.toString();
    }
}
