package org.jflannel.testsupport.netns;

import java.util.concurrent.ThreadLocalRandom;

/** Unique names of at most 15 characters: a short prefix from the parameter name plus a random suffix. */
public final class NetnsNames {
    private NetnsNames() {
    }

    /** E.g. {@code node-k3j9x0aq}: up to 6 letters of {@code hint}, a dash, 8 random base-36 characters. */
    public static String unique(String hint) {
        String prefix = hint == null ? "" : hint.replaceAll("[^A-Za-z0-9]", "").toLowerCase();
        if (prefix.isEmpty() || prefix.startsWith("arg")) {
            prefix = "jt";
        }
        prefix = prefix.substring(0, Math.min(6, prefix.length()));
        StringBuilder sb = new StringBuilder(prefix).append('-');
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int i = 0; i < 8; i++) {
            sb.append(Character.forDigit(r.nextInt(36), 36));
        }
        return sb.toString();
    }
}
