package org.jflannel.linuxnet.netlink;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/** Literal address helpers: parse without DNS, format IPv6 compactly. */
final class Inets {
    private Inets() {
    }

    static InetAddress parseLiteral(String text, String whole) {
        boolean v4 = text.matches("\\d{1,3}(\\.\\d{1,3}){3}");
        boolean v6 = !v4 && text.indexOf(':') >= 0 && text.matches("[0-9a-fA-F:.]+");
        if (!v4 && !v6) {
            throw new IllegalArgumentException("invalid IP address in \"" + whole + "\"");
        }
        if (v4) {
            for (String part : text.split("\\.")) {
                if (Integer.parseInt(part) > 255) {
                    throw new IllegalArgumentException("invalid IP address in \"" + whole + "\"");
                }
            }
        }
        try {
            return InetAddress.getByName(text); // a literal: no lookup happens
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("invalid IP address in \"" + whole + "\"", e);
        }
    }

    static InetAddress of(byte[] bytes) {
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("address must have 4 or 16 bytes, got " + bytes.length, e);
        }
    }

    static String format(InetAddress a) {
        if (!(a instanceof Inet6Address)) {
            return a.getHostAddress();
        }
        byte[] b = a.getAddress();
        int[] w = new int[8];
        for (int i = 0; i < 8; i++) {
            w[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
        }
        int bestAt = -1, bestLen = 1;
        for (int i = 0; i < 8; ) {
            int j = i;
            while (j < 8 && w[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestAt = i;
                bestLen = j - i;
            }
            i = j == i ? i + 1 : j;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestAt) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(w[i]));
        }
        return sb.toString();
    }
}
