package org.jflannel.backend.vxlan;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import org.jflannel.core.MacAddress;

/**
 * What a vxlan node publishes per family (REFERENCE §6.6): {@code {"VNI":1,"VtepMAC":"12:c6:65:89:b4:e3"}}.
 * Decoding follows Go's {@code encoding/json} as upstream uses it: key names match case-insensitively,
 * unknown keys are ignored, {@code VNI} is optional. Ours: a missing or null {@code VtepMAC} is an
 * error (upstream would program an entry without a link-layer address).
 */
record VxlanBackendData(int vni, MacAddress vtepMac) {
    private static final ObjectMapper JSON = new ObjectMapper();

    VxlanBackendData {
        Objects.requireNonNull(vtepMac, "vtepMac");
    }

    /** The exact bytes upstream writes: no spaces, VNI first, lower-case MAC. */
    String toJson() {
        return "{\"VNI\":" + vni + ",\"VtepMAC\":\"" + vtepMac + "\"}";
    }

    /** Decodes a peer's raw backend data; the exception message says what is wrong. */
    static VxlanBackendData parse(String raw) {
        if (raw == null || raw.isBlank()) {
            throw new IllegalArgumentException("unexpected end of JSON input");
        }
        JsonNode root;
        try {
            root = JSON.readTree(raw);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("invalid JSON: " + e.getOriginalMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException("expected a JSON object, got " + raw);
        }
        JsonNode vniNode = field(root, "VNI");
        int vni = 0;
        if (vniNode != null && !vniNode.isNull()) {
            if (!vniNode.canConvertToInt() || !vniNode.isIntegralNumber() || vniNode.intValue() < 0) {
                throw new IllegalArgumentException("VNI: expected a non-negative integer, got " + vniNode);
            }
            vni = vniNode.intValue();
        }
        JsonNode macNode = field(root, "VtepMAC");
        if (macNode == null || !macNode.isTextual()) {
            throw new IllegalArgumentException("VtepMAC: expected a MAC address string, got " + macNode);
        }
        MacAddress mac;
        try {
            mac = MacAddress.parse(macNode.textValue());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("VtepMAC: " + e.getMessage(), e);
        }
        return new VxlanBackendData(vni, mac);
    }

    /** Go matches JSON keys case-insensitively, preferring an exact match. */
    private static JsonNode field(JsonNode root, String name) {
        JsonNode exact = root.get(name);
        if (exact != null) {
            return exact;
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getKey().equalsIgnoreCase(name)) {
                return e.getValue();
            }
        }
        return null;
    }
}
