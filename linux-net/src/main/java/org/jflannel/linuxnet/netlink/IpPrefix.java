package org.jflannel.linuxnet.netlink;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.Objects;

/**
 * An address with a prefix length, as the kernel stores it for addresses and routes. Host bits are
 * kept (an interface address {@code 10.244.1.1/24} is meaningful); {@link #network()} clears them.
 */
public record IpPrefix(InetAddress address, int prefixLength) {

    public IpPrefix {
        Objects.requireNonNull(address, "address");
        int max = address instanceof Inet4Address ? 32 : 128;
        if (prefixLength < 0 || prefixLength > max) {
            throw new IllegalArgumentException("prefix length of " + address.getHostAddress()
                    + " must be 0.." + max + ", got " + prefixLength);
        }
    }

    /** Parses {@code 10.244.1.0/24} or {@code fd00::/64}; a bare address gets /32 or /128. Only literals, never DNS. */
    public static IpPrefix parse(String cidr) {
        if (cidr == null || cidr.isBlank()) {
            throw new IllegalArgumentException("invalid prefix: empty");
        }
        int slash = cidr.indexOf('/');
        String addr = slash < 0 ? cidr : cidr.substring(0, slash);
        InetAddress ip = Inets.parseLiteral(addr, cidr);
        int max = ip instanceof Inet4Address ? 32 : 128;
        int len = max;
        if (slash >= 0) {
            String p = cidr.substring(slash + 1);
            if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(Character::isDigit)) {
                throw new IllegalArgumentException("invalid prefix length in \"" + cidr + "\"");
            }
            len = Integer.parseInt(p);
            if (len > max) {
                throw new IllegalArgumentException("invalid prefix length in \"" + cidr + "\": must be 0.." + max);
            }
        }
        return new IpPrefix(ip, len);
    }

    public static IpPrefix host(InetAddress address) {
        return new IpPrefix(address, address instanceof Inet4Address ? 32 : 128);
    }

    public boolean isIpv4() {
        return address instanceof Inet4Address;
    }

    public boolean isIpv6() {
        return address instanceof Inet6Address;
    }

    /** The same prefix with host bits cleared. */
    public IpPrefix network() {
        byte[] b = address.getAddress();
        for (int i = 0; i < b.length; i++) {
            int keep = Math.max(0, Math.min(8, prefixLength - 8 * i));
            b[i] &= (byte) (0xff00 >>> keep);
        }
        return new IpPrefix(Inets.of(b), prefixLength);
    }

    /** Whether {@code a} lies in this prefix (false for the other family). */
    public boolean contains(InetAddress a) {
        byte[] net = address.getAddress();
        byte[] ip = a.getAddress();
        if (net.length != ip.length) {
            return false;
        }
        int bits = prefixLength;
        for (int i = 0; i < net.length && bits > 0; i++, bits -= 8) {
            int mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
            if ((net[i] & mask) != (ip[i] & mask)) {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code inner} is a strictly smaller prefix inside this one (a peer's subnet in the flannel Network). */
    public boolean strictlyContains(IpPrefix inner) {
        return inner.prefixLength > prefixLength && contains(inner.address);
    }

    @Override
    public String toString() {
        return Inets.format(address) + "/" + prefixLength;
    }
}
