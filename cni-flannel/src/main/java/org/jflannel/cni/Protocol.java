package org.jflannel.cni;

import java.util.List;

/**
 * The protocol rules of upstream's skel and version packages (REFERENCE §11.7, §12): supported
 * versions, version comparison with Go's error texts, container ID, network and interface name
 * rules. Hand-written checks instead of java.util.regex: fewer classes to load per pod.
 */
final class Protocol {

    static final List<String> SUPPORTED = List.of("0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0");
    static final String LATEST = "1.1.0";

    private Protocol() {
    }

    /** ^[a-zA-Z0-9][a-zA-Z0-9_.\-]*$ (Go's $: end of text, no newline allowance). */
    static boolean isValidId(String s) {
        if (s.isEmpty() || !isAlnum(s.charAt(0))) {
            return false;
        }
        for (int i = 1; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!isAlnum(c) && c != '_' && c != '.' && c != '-') {
                return false;
            }
        }
        return true;
    }

    private static boolean isAlnum(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }

    static void validateContainerId(String id) throws CniException {
        if (!isValidId(id)) {
            throw new CniException(CniException.INVALID_ENVIRONMENT, "invalid characters in containerID", id);
        }
    }

    static void validateNetworkName(String name) throws CniException {
        if (!isValidId(name)) {
            throw new CniException(CniException.INVALID_CONFIG, "invalid characters found in network name", name);
        }
    }

    static void validateInterfaceName(String name) throws CniException {
        int bytes = name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (bytes > 15) {
            throw new CniException(CniException.INVALID_ENVIRONMENT, "interface name is too long",
                "interface name should be less than 16 characters");
        }
        if (name.equals(".") || name.equals("..")) {
            throw new CniException(CniException.INVALID_ENVIRONMENT, "interface name is . or ..");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '/' || c == ':' || isGoSpace(c)) {
                throw new CniException(CniException.INVALID_ENVIRONMENT, "interface name contains / or : or whitespace characters");
            }
        }
    }

    /** unicode.IsSpace. */
    private static boolean isGoSpace(char c) {
        return c == ' ' || (c >= '\t' && c <= '\r') || c == 0x85 || c == 0xa0 || Character.isSpaceChar(c);
    }

    /** version.ParseVersion: {major, minor, micro}; "" is 0.1.0. */
    static int[] parseVersion(String v) throws CniException {
        if (v.isEmpty()) {
            return new int[] {0, 1, 0};
        }
        String[] parts = v.split("\\.", -1);
        if (parts.length >= 4) {
            throw new CniException(CniException.DECODING_FAILURE, "invalid version " + GoText.quote(v) + ": too many parts");
        }
        String[] names = {"major", "minor", "micro"};
        int[] out = new int[3];
        for (int i = 0; i < parts.length; i++) {
            out[i] = atoi(parts[i], names[i]);
        }
        return out;
    }

    /** strconv.Atoi with its error texts, wrapped as ParseVersion wraps them. */
    private static int atoi(String s, String part) throws CniException {
        String prefix = "failed to convert " + part + " version part " + GoText.quote(s) + ": strconv.Atoi: parsing " + GoText.quote(s);
        int i = s.startsWith("+") || s.startsWith("-") ? 1 : 0;
        if (i == s.length()) {
            throw new CniException(CniException.DECODING_FAILURE, prefix + ": invalid syntax");
        }
        for (int j = i; j < s.length(); j++) {
            if (s.charAt(j) < '0' || s.charAt(j) > '9') {
                throw new CniException(CniException.DECODING_FAILURE, prefix + ": invalid syntax");
            }
        }
        try {
            long n = Long.parseLong(s);
            if (n > Integer.MAX_VALUE || n < Integer.MIN_VALUE) {
                throw new NumberFormatException();
            }
            return (int) n;
        } catch (NumberFormatException e) {
            throw new CniException(CniException.DECODING_FAILURE, prefix + ": value out of range");
        }
    }

    /** version.GreaterThanOrEqualTo. */
    static boolean atLeast(String v, String than) throws CniException {
        int[] a = parseVersion(v);
        int[] b = parseVersion(than);
        for (int i = 0; i < 3; i++) {
            if (a[i] != b[i]) {
                return a[i] > b[i];
            }
        }
        return true;
    }

    /** The reconciler's check: the config version must be one we list. */
    static void checkSupported(String configVersion) throws CniException {
        if (!SUPPORTED.contains(configVersion)) {
            StringBuilder sb = new StringBuilder("[");
            for (int i = 0; i < SUPPORTED.size(); i++) {
                sb.append(i > 0 ? " " : "").append('"').append(SUPPORTED.get(i)).append('"');
            }
            throw new CniException(CniException.INCOMPATIBLE_VERSION, "incompatible CNI versions",
                "config is " + GoText.quote(configVersion) + ", plugin supports " + sb.append(']'));
        }
    }

    /** skel's gate for CHECK (0.4.0), GC and STATUS (1.1.0). */
    static void checkCommandAllowed(String command, String configVersion, String minimum) throws CniException {
        if (!atLeast(configVersion, minimum)) {
            throw new CniException(CniException.INCOMPATIBLE_VERSION, "config version does not allow " + command);
        }
        for (String supported : SUPPORTED) {
            if (atLeast(supported, configVersion)) {
                return;
            }
        }
        throw new CniException(CniException.INCOMPATIBLE_VERSION, "plugin version does not allow " + command);
    }
}
