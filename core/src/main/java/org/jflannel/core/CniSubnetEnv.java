package org.jflannel.core;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * subnet.env as the flannel CNI plugin reads it (REFERENCE §11.2), which is stricter and
 * different from the daemon's dotenv reading (§3): exact key match, first '=' splits, networks
 * are comma-separated lists reduced to their network address, and errors carry Go's parser texts
 * because users grep for them.
 *
 * <p>Networks and subnets are kept as canonical text ({@code 10.1.17.0/24}, {@code fc00::/64})
 * because that is all the plugin does with them; a key may carry either family, as upstream
 * accepts. {@code subnet} and {@code ipv6Subnet} are null when absent (at least one is present).
 */
public record CniSubnetEnv(List<String> networks, List<String> ipv6Networks, String subnet,
                           String ipv6Subnet, long mtu, boolean ipMasq) {

    public CniSubnetEnv {
        networks = List.copyOf(networks);
        ipv6Networks = List.copyOf(ipv6Networks);
        if (networks.isEmpty() && ipv6Networks.isEmpty()) {
            throw new IllegalArgumentException("subnet.env needs FLANNEL_NETWORK or FLANNEL_IPV6_NETWORK");
        }
        if (subnet == null && ipv6Subnet == null) {
            throw new IllegalArgumentException("subnet.env needs FLANNEL_SUBNET or FLANNEL_IPV6_SUBNET");
        }
        if (mtu < 0 || mtu > 0xffff_ffffL) {
            throw new IllegalArgumentException("FLANNEL_MTU must be an unsigned 32-bit integer, got " + mtu);
        }
    }

    /**
     * A known key on a line without '='. Upstream crashes on it; we report it as an invalid
     * configuration (CNI code 7) naming the file and the line.
     */
    public static final class MissingEqualsException extends ConfigException {
        private static final long serialVersionUID = 1L;

        MissingEqualsException(String field, String message) {
            super(field, message);
        }
    }

    /**
     * Reads and parses the file. Messages are Go's: {@code open <path>: no such file or directory},
     * {@code invalid CIDR address: bogus}, {@code <path> is missing FLANNEL_MTU}.
     */
    public static CniSubnetEnv read(String path) throws ConfigException {
        byte[] bytes;
        try {
            if (path.isEmpty()) {
                throw new NoSuchFileException(path); // Go: open "" fails; Path.of("") would be the cwd
            }
            bytes = Files.readAllBytes(Path.of(path));
        } catch (NoSuchFileException | NotDirectoryException e) {
            throw new ConfigException("", "open " + path + ": no such file or directory", e);
        } catch (AccessDeniedException e) {
            throw new ConfigException("", "open " + path + ": permission denied", e);
        } catch (IOException e) {
            String reason = Files.isDirectory(Path.of(path)) ? "is a directory" : String.valueOf(e.getMessage());
            throw new ConfigException("", "read " + path + ": " + reason, e);
        }
        return parse(path, new String(bytes, StandardCharsets.UTF_8));
    }

    /** Parses {@code content}; {@code path} only appears in messages. */
    public static CniSubnetEnv parse(String path, String content) throws ConfigException {
        List<String> nws = new ArrayList<>();
        List<String> nws6 = new ArrayList<>();
        String sn = null;
        String sn6 = null;
        Long mtu = null;
        Boolean ipMasq = null;
        List<String> lines = splitLines(content);
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int eq = line.indexOf('=');
            String key = eq < 0 ? line : line.substring(0, eq);
            if (!isKnownKey(key)) {
                continue;
            }
            if (eq < 0) {
                throw new MissingEqualsException(key, path + ": line " + (i + 1) + ": missing '=' in " + quote(line));
            }
            String value = line.substring(eq + 1);
            switch (key) {
                case "FLANNEL_NETWORK" -> nws = parseList(key, value);
                case "FLANNEL_IPV6_NETWORK" -> nws6 = parseList(key, value);
                case "FLANNEL_SUBNET" -> sn = parseCidr(key, value);
                case "FLANNEL_IPV6_SUBNET" -> sn6 = parseCidr(key, value);
                case "FLANNEL_MTU" -> mtu = parseMtu(value);
                default -> ipMasq = "true".equals(value); // FLANNEL_IPMASQ: only exactly "true"
            }
        }
        String missing = missing(nws, nws6, sn, sn6, mtu, ipMasq);
        if (!missing.isEmpty()) {
            throw new ConfigException("", path + " is missing " + missing);
        }
        return new CniSubnetEnv(nws, nws6, sn, sn6, mtu, ipMasq);
    }

    private static boolean isKnownKey(String key) {
        return switch (key) {
            case "FLANNEL_NETWORK", "FLANNEL_IPV6_NETWORK", "FLANNEL_SUBNET", "FLANNEL_IPV6_SUBNET",
                 "FLANNEL_MTU", "FLANNEL_IPMASQ" -> true;
            default -> false;
        };
    }

    /** Lines as Go's bufio.Scanner gives them: split at '\n', one trailing '\r' dropped, no empty last line. */
    static List<String> splitLines(String content) {
        List<String> lines = new ArrayList<>();
        int start = 0;
        while (start < content.length()) {
            int nl = content.indexOf('\n', start);
            int end = nl < 0 ? content.length() : nl;
            String line = content.substring(start, end);
            if (line.endsWith("\r")) {
                line = line.substring(0, line.length() - 1);
            }
            lines.add(line);
            start = end + 1;
        }
        return lines;
    }

    private static List<String> parseList(String key, String value) throws ConfigException {
        List<String> out = new ArrayList<>();
        for (String part : value.split(",", -1)) {
            String cidr = parseCidr(key, part);
            if (!out.contains(cidr)) {
                out.add(cidr);
            }
        }
        return out;
    }

    /**
     * A CIDR of either family reduced to its network address, in Go's text form. Formatting uses
     * StringBuilder rather than '+': the CNI plugin runs this once per pod, and the first
     * invokedynamic string concatenation costs a JVM milliseconds of method-handle spinning.
     */
    static String parseCidr(String key, String text) throws ConfigException {
        try {
            if (text.indexOf(':') >= 0) {
                return ip6Text(Ip6Net.parse(text));
            }
            Ip4Net net = Ip4Net.parse(text);
            return ip4Text(net.address(), net.prefixLength());
        } catch (IllegalArgumentException e) {
            throw new ConfigException(key, "invalid CIDR address: " + text, e);
        }
    }

    private static String ip4Text(int a, int prefix) {
        return new StringBuilder(18).append(a >>> 24).append('.').append((a >>> 16) & 0xff).append('.')
            .append((a >>> 8) & 0xff).append('.').append(a & 0xff).append('/').append(prefix).toString();
    }

    /** Go prints an IPv4-mapped network address (::ffff:a.b.c.d) as IPv4 with the prefix less 96. */
    private static String ip6Text(Ip6Net net) {
        if (net.high() == 0 && (net.low() >>> 32) == 0xffffL && net.prefixLength() >= 96) {
            return ip4Text((int) net.low(), net.prefixLength() - 96);
        }
        return new StringBuilder(43).append(Ip6Net.formatAddress(net.high(), net.low())).append('/').append(net.prefixLength()).toString();
    }

    /** strconv.ParseUint(value, 10, 32) with its error texts. */
    static long parseMtu(String value) throws ConfigException {
        if (value.isEmpty()) {
            throw new ConfigException("FLANNEL_MTU", "strconv.ParseUint: parsing " + quote(value) + ": invalid syntax");
        }
        long n = 0;
        boolean overflow = false;
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') {
                throw new ConfigException("FLANNEL_MTU", "strconv.ParseUint: parsing " + quote(value) + ": invalid syntax");
            }
            n = n * 10 + (c - '0');
            if (n > 0xffff_ffffL) {
                overflow = true;
                n = 0xffff_ffffL + 1;
            }
        }
        if (overflow) {
            throw new ConfigException("FLANNEL_MTU", "strconv.ParseUint: parsing " + quote(value) + ": value out of range");
        }
        return n;
    }

    private static String missing(List<String> nws, List<String> nws6, String sn, String sn6, Long mtu, Boolean ipMasq) {
        List<String> m = new ArrayList<>();
        if (nws.isEmpty() && nws6.isEmpty()) {
            m.add("FLANNEL_NETWORK");
            m.add("FLANNEL_IPV6_NETWORK");
        }
        if (sn == null && sn6 == null) {
            m.add("FLANNEL_SUBNET");
            m.add("FLANNEL_IPV6_SUBNET");
        }
        if (mtu == null) {
            m.add("FLANNEL_MTU");
        }
        if (ipMasq == null) {
            m.add("FLANNEL_IPMASQ");
        }
        return String.join(", ", m);
    }

    /** Go's %q for the texts that can appear here: backslash and quote escaped, control characters as \xNN. */
    static String quote(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\t' -> sb.append("\\t");
                case '\r' -> sb.append("\\r");
                default -> {
                    if (c < 0x20 || c == 0x7f) {
                        sb.append(String.format("\\x%02x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }
}
