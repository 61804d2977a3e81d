package org.jflannel.backend.ipsec.vici;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A VICI message or section: ordered entries, each a value ({@link String}), a list of values
 * ({@code List<String>}) or a nested section ({@link ViciMessage}). Values are text here: everything
 * flannel sends (addresses, proposals, the PSK) and reads back (names, versions) is. Immutable.
 */
public final class ViciMessage {
    public static final ViciMessage EMPTY = new ViciMessage(Map.of());

    private final Map<String, Object> entries;

    private ViciMessage(Map<String, Object> entries) {
        this.entries = entries;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Set<String> keys() {
        return entries.keySet();
    }

    /** Entries in order, for the encoder. */
    Map<String, Object> entries() {
        return entries;
    }

    /** The value of {@code key}, or null when absent or not a plain value. */
    public String value(String key) {
        return entries.get(key) instanceof String s ? s : null;
    }

    /** The list {@code key}, empty when absent or not a list. */
    @SuppressWarnings("unchecked")
    public List<String> list(String key) {
        return entries.get(key) instanceof List<?> l ? (List<String>) l : List.of();
    }

    /** The section {@code key}, or null when absent or not a section. */
    public ViciMessage section(String key) {
        return entries.get(key) instanceof ViciMessage m ? m : null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ViciMessage m && entries.equals(m.entries);
    }

    @Override
    public int hashCode() {
        return entries.hashCode();
    }

    /** Debug text; never log a message that carries a secret (load-shared). */
    @Override
    public String toString() {
        return entries.toString();
    }

    public static final class Builder {
        private final Map<String, Object> entries = new LinkedHashMap<>();

        public Builder put(String key, String value) {
            return add(key, Objects.requireNonNull(value, key));
        }

        public Builder put(String key, List<String> values) {
            values.forEach(v -> Objects.requireNonNull(v, key));
            return add(key, List.copyOf(values));
        }

        public Builder put(String key, ViciMessage section) {
            return add(key, Objects.requireNonNull(section, key));
        }

        private Builder add(String key, Object v) {
            Objects.requireNonNull(key, "key");
            if (entries.putIfAbsent(key, v) != null) {
                throw new IllegalArgumentException("vici message: duplicate key \"" + key + "\"");
            }
            return this;
        }

        public ViciMessage build() {
            return new ViciMessage(Collections.unmodifiableMap(new LinkedHashMap<>(entries)));
        }

        /** For the decoder: a list grows item by item. */
        List<String> startList(String key) {
            List<String> l = new ArrayList<>();
            add(key, l);
            return l;
        }

        /** Freezes lists the decoder filled. */
        ViciMessage buildFrozen() {
            Map<String, Object> m = new LinkedHashMap<>();
            entries.forEach((k, v) -> m.put(k, v instanceof List<?> l ? List.copyOf(l) : v));
            return new ViciMessage(Collections.unmodifiableMap(m));
        }
    }
}
