package org.jflannel.backend.wireguard;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Base64;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;

/**
 * The lease's backend data, upstream's {@code {"PublicKey":"<base64>","Port":<ListenPort>}}: what
 * we publish, and what we read from a peer's lease (keys matched case-insensitively, as Go's decoder).
 */
record WireguardLeaseData(byte[] publicKey, int port) {
    private static final ObjectMapper JSON = new ObjectMapper();

    String toJson() {
        return "{\"PublicKey\":\"" + Base64.getEncoder().encodeToString(publicKey) + "\",\"Port\":" + port + "}";
    }

    /** A peer's data; empty when absent or unusable (no 32-byte base64 PublicKey). Port 0 when absent. */
    static Optional<WireguardLeaseData> parse(String raw) {
        if (raw == null || raw.isBlank()) {
            return Optional.empty();
        }
        try {
            JsonNode root = JSON.readTree(raw);
            if (root == null || !root.isObject()) {
                return Optional.empty();
            }
            String key = null;
            int port = 0;
            for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                if (e.getKey().equalsIgnoreCase("PublicKey") && e.getValue().isTextual()) {
                    key = e.getValue().textValue();
                } else if (e.getKey().equalsIgnoreCase("Port") && e.getValue().canConvertToInt()) {
                    port = e.getValue().intValue();
                }
            }
            if (key == null) {
                return Optional.empty();
            }
            byte[] k = Base64.getDecoder().decode(key);
            return k.length == 32 && port >= 0 && port <= 65535 ? Optional.of(new WireguardLeaseData(k, port)) : Optional.empty();
        } catch (java.io.IOException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
