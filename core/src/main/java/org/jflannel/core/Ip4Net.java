package org.jflannel.core;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * An IPv4 network: address (host bits cleared) and prefix length. The address is an unsigned
 * 32-bit value held in an int.
 */
public record Ip4Net(int address, int prefixLength) implements Comparable<Ip4Net> {

    public Ip4Net {
        if (prefixLength < 0 || prefixLength > 32) {
            throw new IllegalArgumentException("IPv4 prefix length must be 0..32, got " + prefixLength);
        }
        address &= mask(prefixLength);
    }

    /** Parses {@code a.b.c.d/n}; host bits are cleared ({@code 10.1.17.1/24} gives {@code 10.1.17.0/24}). */
    public static Ip4Net parse(String cidr) {
        int slash = cidr.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException("invalid CIDR address: " + cidr);
        }
        int prefix = parsePrefix(cidr.substring(slash + 1), 32, cidr);
        return new Ip4Net(parseAddress(cidr.substring(0, slash), "invalid CIDR address: " + cidr), prefix);
    }

    /** Parses a dotted quad strictly (four decimal octets, no leading zeros beyond "0"). */
    public static int parseAddress(String text) {
        return parseAddress(text, "invalid IPv4 address: " + text);
    }

    /** {@code error} is the whole message of the exception thrown when {@code text} is not a dotted quad. */
    private static int parseAddress(String text, String error) {
        String[] parts = text.split("\\.", -1);
        if (parts.length != 4) {
            throw new IllegalArgumentException(error);
        }
        int value = 0;
        for (String part : parts) {
            if (part.isEmpty() || part.length() > 3 || (part.length() > 1 && part.charAt(0) == '0')) {
                throw new IllegalArgumentException(error);
            }
            int octet = 0;
            for (int i = 0; i < part.length(); i++) {
                char c = part.charAt(i);
                if (c < '0' || c > '9') {
                    throw new IllegalArgumentException(error);
                }
                octet = octet * 10 + (c - '0');
            }
            if (octet > 255) {
                throw new IllegalArgumentException(error);
            }
            value = (value << 8) | octet;
        }
        return value;
    }

    /** The prefix length as Go's {@code dtoi} reads it: decimal digits only, leading zeros allowed. */
    static int parsePrefix(String text, int max, String whole) {
        if (text.isEmpty()) {
            throw new IllegalArgumentException("invalid CIDR address: " + whole);
        }
        int n = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                throw new IllegalArgumentException("invalid CIDR address: " + whole);
            }
            n = n * 10 + (c - '0');
            if (n > max) {
                throw new IllegalArgumentException("invalid CIDR address: " + whole);
            }
        }
        return n;
    }

    public static int mask(int prefixLength) {
        return prefixLength == 0 ? 0 : -1 << (32 - prefixLength);
    }

    public static String formatAddress(int address) {
        return (address >>> 24) + "." + ((address >>> 16) & 0xff) + "." + ((address >>> 8) & 0xff) + "." + (address & 0xff);
    }

    public static Inet4Address toInet(int address) {
        byte[] b = {(byte) (address >>> 24), (byte) (address >>> 16), (byte) (address >>> 8), (byte) address};
        try {
            return (Inet4Address) InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new AssertionError(e); // four bytes are always a valid address
        }
    }

    public static int fromInet(Inet4Address address) {
        byte[] b = address.getAddress();
        return ((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
    }

    public Inet4Address inetAddress() {
        return toInet(address);
    }

    /** Number of addresses in this network. */
    public long size() {
        return 1L << (32 - prefixLength);
    }

    /** The network right after this one, of the same length ({@code 10.1.0.0/24} → {@code 10.1.1.0/24}). */
    public Ip4Net next() {
        return new Ip4Net((int) (Integer.toUnsignedLong(address) + size()), prefixLength);
    }

    public boolean contains(int ip) {
        return (ip & mask(prefixLength)) == address;
    }

    /** True when {@code other} lies entirely inside this network. */
    public boolean contains(Ip4Net other) {
        return other.prefixLength >= prefixLength && contains(other.address);
    }

    public boolean overlaps(Ip4Net other) {
        int shorter = Math.min(prefixLength, other.prefixLength);
        return (address & mask(shorter)) == (other.address & mask(shorter));
    }

    /** The {@code index}-th subnet of length {@code subnetLen} inside this network. */
    public Ip4Net subnet(int subnetLen, long index) {
        if (subnetLen < prefixLength || subnetLen > 32) {
            throw new IllegalArgumentException("subnet length " + subnetLen + " does not fit in " + this);
        }
        long count = 1L << (subnetLen - prefixLength);
        if (index < 0 || index >= count) {
            throw new IllegalArgumentException("subnet index " + index + " out of 0.." + (count - 1) + " in " + this);
        }
        return new Ip4Net((int) (Integer.toUnsignedLong(address) + (index << (32 - subnetLen))), subnetLen);
    }

    /** Index of {@code subnet} among the subnets of its length inside this network. */
    public long indexOf(Ip4Net subnet) {
        if (!contains(subnet)) {
            throw new IllegalArgumentException(subnet + " is not inside " + this);
        }
        return (Integer.toUnsignedLong(subnet.address) - Integer.toUnsignedLong(address)) >>> (32 - subnet.prefixLength);
    }

    @Override
    public int compareTo(Ip4Net o) {
        int c = Integer.compareUnsigned(address, o.address);
        return c != 0 ? c : Integer.compare(prefixLength, o.prefixLength);
    }

    @Override
    public String toString() {
        return formatAddress(address) + "/" + prefixLength;
    }
}
