package org.jflannel.linuxnet.sys;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jflannel.linuxnet.netns.NetNs;

/**
 * Kernel parameters under /proc/sys, as the calling thread's network namespace sees them (run it
 * through {@link NetNs#call} for another namespace).
 */
public final class Sysctl {
    private static final Path ROOT = Path.of("/proc/sys");

    private Sysctl() {
    }

    /** Reads {@code net/ipv4/ip_forward} or {@code net.ipv4.ip_forward}; the value without the trailing newline. */
    public static String read(String key) throws IOException {
        Path p = path(key);
        try {
            return Files.readString(p, StandardCharsets.US_ASCII).strip();
        } catch (IOException e) {
            throw new IOException("sysctl " + key + ": cannot read " + p + ": " + e, e);
        }
    }

    public static void write(String key, String value) throws IOException {
        Path p = path(key);
        try {
            Files.writeString(p, value, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IOException("sysctl " + key + ": cannot write \"" + value + "\" to " + p + ": " + e, e);
        }
    }

    /**
     * The dotted form maps dots to slashes, so a device name with a dot ({@code flannel.1}) needs the
     * slash form: {@code net/ipv6/conf/flannel.1/accept_ra}.
     */
    static Path path(String key) {
        if (key == null || key.isBlank() || key.contains("..") || key.startsWith("/") || key.startsWith(".")) {
            throw new IllegalArgumentException("sysctl key: invalid \"" + key + "\"");
        }
        String rel = key.indexOf('/') >= 0 ? key : key.replace('.', '/');
        return ROOT.resolve(rel);
    }
}
