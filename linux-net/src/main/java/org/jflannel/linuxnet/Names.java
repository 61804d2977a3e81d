package org.jflannel.linuxnet;

/** Validation of kernel object names (IFNAMSIZ is 16 including the terminating NUL). */
public final class Names {
    static final int MAX_IFNAME = 15;

    private Names() {
    }

    public static String checkIfName(String field, String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException(field + ": interface name must not be empty");
        }
        if (name.length() > MAX_IFNAME) {
            throw new IllegalArgumentException(field + ": interface name \"" + name + "\" is longer than "
                    + MAX_IFNAME + " characters (" + name.length() + ")");
        }
        if (name.equals(".") || name.equals("..") || !name.chars().allMatch(c -> c > 32 && c < 127 && c != '/' && c != ':')) {
            throw new IllegalArgumentException(field + ": invalid interface name \"" + name + "\"");
        }
        return name;
    }

    public static String checkNsName(String name) {
        if (name == null || name.isEmpty() || name.length() > 255 || name.equals(".") || name.equals("..")
                || !name.chars().allMatch(c -> c > 32 && c < 127 && c != '/')) {
            throw new IllegalArgumentException("netns name: invalid \"" + name + "\"");
        }
        return name;
    }
}
