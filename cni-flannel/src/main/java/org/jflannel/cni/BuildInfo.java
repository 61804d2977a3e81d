package org.jflannel.cni;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** Version and commit for the "about" text, from build.properties (filtered by Maven). */
final class BuildInfo {

    private static final Properties PROPS = load();

    private BuildInfo() {
    }

    private static Properties load() {
        Properties p = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream("build.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // about text only; fall back to "unknown"
        }
        return p;
    }

    static String version() {
        return PROPS.getProperty("version", "unknown");
    }

    static String commit() {
        return PROPS.getProperty("commit", "unknown");
    }

    /** Go's GOARCH names for the common JVM ones. */
    static String arch() {
        String a = System.getProperty("os.arch", "unknown");
        return switch (a) {
            case "x86_64", "amd64" -> "amd64";
            case "aarch64" -> "arm64";
            default -> a;
        };
    }
}
