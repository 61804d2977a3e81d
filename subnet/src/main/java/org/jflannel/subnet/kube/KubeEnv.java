package org.jflannel.subnet.kube;

import org.jflannel.core.ConfigException;

import java.util.Map;
import java.util.Set;

/**
 * The environment variables the kube subnet manager reads directly (REFERENCE §1): NODE_NAME,
 * POD_NAME, POD_NAMESPACE, EVENT_QUEUE_DEPTH, CONT_WHEN_CACHE_NOT_READY. Parsed from a map so tests
 * need no process environment.
 *
 * @param nodeName  "" when unset
 */
public record KubeEnv(String nodeName, String podName, String podNamespace, int eventQueueDepth,
                      boolean contWhenCacheNotReady) {

    public static final int DEFAULT_EVENT_QUEUE_DEPTH = 5000;
    private static final Set<String> GO_TRUE = Set.of("1", "t", "T", "TRUE", "true", "True");

    public static KubeEnv from(Map<String, String> env) throws ConfigException {
        return new KubeEnv(
                env.getOrDefault("NODE_NAME", ""),
                env.getOrDefault("POD_NAME", ""),
                env.getOrDefault("POD_NAMESPACE", ""),
                eventQueueDepth(env.get("EVENT_QUEUE_DEPTH")),
                GO_TRUE.contains(env.getOrDefault("CONT_WHEN_CACHE_NOT_READY", "")));
    }

    /** Unset or empty → 5000; ≤ 0 silently → 5000; not an integer → upstream's fatal message (strconv.Atoi's error). */
    static int eventQueueDepth(String v) throws ConfigException {
        if (v == null || v.isEmpty()) {
            return DEFAULT_EVENT_QUEUE_DEPTH;
        }
        String digits = v.startsWith("+") || v.startsWith("-") ? v.substring(1) : v;
        if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new ConfigException("EVENT_QUEUE_DEPTH",
                    "env EVENT_QUEUE_DEPTH=" + v + " format error: strconv.Atoi: parsing \"" + v + "\": invalid syntax");
        }
        long depth;
        try {
            depth = Long.parseLong(v);
        } catch (NumberFormatException e) {
            depth = v.startsWith("-") ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        if (depth > Integer.MAX_VALUE - 8) {
            throw new ConfigException("EVENT_QUEUE_DEPTH",
                    "env EVENT_QUEUE_DEPTH=" + v + " format error: strconv.Atoi: parsing \"" + v + "\": value out of range");
        }
        return depth <= 0 ? DEFAULT_EVENT_QUEUE_DEPTH : (int) depth;
    }
}
