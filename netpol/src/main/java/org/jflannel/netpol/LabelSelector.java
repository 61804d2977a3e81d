package org.jflannel.netpol;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A metav1.LabelSelector: every {@code matchLabels} pair and every requirement must hold (AND); the
 * empty selector selects everything. Canonical (sorted) so that equal selectors are equal records and
 * share one address set.
 */
public record LabelSelector(Map<String, String> matchLabels, List<Requirement> matchExpressions) {
    /** Selects everything ({@code {}}). */
    public static final LabelSelector ALL = new LabelSelector(Map.of(), List.of());

    public LabelSelector {
        matchLabels = java.util.Collections.unmodifiableMap(new TreeMap<>(matchLabels));
        matchExpressions = matchExpressions.stream().distinct().sorted().toList();
    }

    /** A selector of {@code key=value} pairs only. */
    public static LabelSelector of(Map<String, String> matchLabels) {
        return new LabelSelector(matchLabels, List.of());
    }

    public boolean matches(Map<String, String> labels) {
        for (Map.Entry<String, String> e : matchLabels.entrySet()) {
            if (!e.getValue().equals(labels.get(e.getKey()))) {
                return false;
            }
        }
        for (Requirement r : matchExpressions) {
            if (!r.matches(labels)) {
                return false;
            }
        }
        return true;
    }

    public boolean selectsAll() {
        return matchLabels.isEmpty() && matchExpressions.isEmpty();
    }

    /** The operators of a requirement. */
    public enum Operator {
        In, NotIn, Exists, DoesNotExist;

        static Operator parse(String field, String value) {
            for (Operator o : values()) {
                if (o.name().equals(value)) {
                    return o;
                }
            }
            throw new IllegalArgumentException(field + ": expected In, NotIn, Exists or DoesNotExist, got \"" + value + "\"");
        }
    }

    /** One {@code matchExpressions} entry, checked as the API server validates it. */
    public record Requirement(String key, Operator operator, Set<String> values) implements Comparable<Requirement> {
        public Requirement {
            if (key == null || key.isEmpty()) {
                throw new IllegalArgumentException("key: must not be empty");
            }
            values = java.util.Collections.unmodifiableSortedSet(new TreeSet<>(values));
            boolean needsValues = operator == Operator.In || operator == Operator.NotIn;
            if (needsValues && values.isEmpty()) {
                throw new IllegalArgumentException("values: must be non-empty for operator " + operator + " (key " + key + ")");
            }
            if (!needsValues && !values.isEmpty()) {
                throw new IllegalArgumentException("values: must be empty for operator " + operator + " (key " + key + ")");
            }
        }

        /** Parses {@code operator} as the API's string; {@code field} names the entry in errors. */
        public static Requirement of(String field, String key, String operator, Set<String> values) {
            try {
                return new Requirement(key, Operator.parse(field + ".operator", operator), values);
            } catch (IllegalArgumentException e) {
                throw e.getMessage().startsWith(field) ? e : new IllegalArgumentException(field + "." + e.getMessage(), e);
            }
        }

        boolean matches(Map<String, String> labels) {
            String v = labels.get(key);
            return switch (operator) {
                case In -> v != null && values.contains(v);
                case NotIn -> v == null || !values.contains(v);
                case Exists -> v != null;
                case DoesNotExist -> v == null;
            };
        }

        @Override
        public int compareTo(Requirement o) {
            int c = key.compareTo(o.key);
            if (c == 0) {
                c = operator.compareTo(o.operator);
            }
            return c != 0 ? c : String.join(",", values).compareTo(String.join(",", o.values));
        }
    }
}
