package org.jflannel.backend.udp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Iterator;
import java.util.Map;

/**
 * Ours: what a udp node publishes as backend data. Upstream's udp backend publishes none and reads
 * none (REFERENCE §7), so an upstream node ignores this. We publish {@code {"KernelDecap":true}}
 * when our kernel datapath decapsulates ({@link KernelPath}): only to such a peer do we send whole
 * super-packets, which a plain UDP socket on a veth or bridge underlay would receive as one
 * oversized datagram. Anything else (absent, {@code null}, other JSON, malformed) means no.
 */
final class UdpBackendData {
    static final String KERNEL_DECAP = "{\"KernelDecap\":true}";
    private static final ObjectMapper JSON = new ObjectMapper();

    private UdpBackendData() {
    }

    /** The backend data we publish: {@link #KERNEL_DECAP} when our kernel decapsulates, else none (upstream's). */
    static String publish(boolean kernelDecap) {
        return kernelDecap ? KERNEL_DECAP : null;
    }

    /** True when a peer's raw backend data says it decapsulates in its kernel (keys match case-insensitively, as Go's). */
    static boolean kernelDecap(String raw) {
        if (raw == null || raw.isBlank()) {
            return false;
        }
        JsonNode root;
        try {
            root = JSON.readTree(raw);
        } catch (JsonProcessingException e) {
            return false;
        }
        if (root == null || !root.isObject()) {
            return false;
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getKey().equalsIgnoreCase("KernelDecap")) {
                return e.getValue().isBoolean() && e.getValue().booleanValue();
            }
        }
        return false;
    }
}
