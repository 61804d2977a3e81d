package org.jflannel.testsupport.nft;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One table as {@code nft -j list table <family> <name>} prints it (libnftables' JSON schema 1),
 * read as an independent witness of what the kernel holds: base-chain attributes and each rule
 * rendered back to nft's text syntax ({@code ip saddr != 10.244.1.0/24 ip daddr 10.244.0.0/16 return}).
 * An expression it does not know fails loudly instead of being skipped.
 */
public record NftJson(List<Chain> chains, Map<String, List<String>> rules) {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** A chain; {@code type}, {@code hook}, {@code prio} and {@code policy} are null for a regular chain. */
    public record Chain(String name, String type, String hook, Integer prio, String policy) {
        public Chain {
            Objects.requireNonNull(name, "name");
        }
    }

    public NftJson {
        chains = List.copyOf(chains);
        Map<String, List<String>> copy = new LinkedHashMap<>();
        rules.forEach((k, v) -> copy.put(k, List.copyOf(v)));
        rules = java.util.Collections.unmodifiableMap(copy);
    }

    public static NftJson parse(String json) throws IOException {
        JsonNode root = MAPPER.readTree(json).path("nftables");
        if (!root.isArray()) {
            throw new IOException("nft JSON: no \"nftables\" array in " + json);
        }
        List<Chain> chains = new ArrayList<>();
        Map<String, List<String>> rules = new LinkedHashMap<>();
        for (JsonNode o : root) {
            if (o.has("chain")) {
                JsonNode c = o.get("chain");
                chains.add(new Chain(c.path("name").asText(), text(c, "type"), text(c, "hook"),
                        c.has("prio") ? c.get("prio").asInt() : null, text(c, "policy")));
                rules.computeIfAbsent(c.path("name").asText(), k -> new ArrayList<>());
            } else if (o.has("rule")) {
                JsonNode r = o.get("rule");
                rules.computeIfAbsent(r.path("chain").asText(), k -> new ArrayList<>()).add(renderRule(r.path("expr")));
            }
        }
        return new NftJson(chains, rules);
    }

    public Chain chain(String name) {
        return chains.stream().filter(c -> c.name().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no chain " + name + " in " + chains));
    }

    public List<String> rulesOf(String chain) {
        return rules.getOrDefault(chain, List.of());
    }

    public int ruleCount() {
        return rules.values().stream().mapToInt(List::size).sum();
    }

    static String renderRule(JsonNode exprs) {
        List<String> parts = new ArrayList<>();
        for (JsonNode e : exprs) {
            parts.add(renderStatement(e));
        }
        return String.join(" ", parts);
    }

    private static String renderStatement(JsonNode e) {
        if (e.has("match")) {
            JsonNode m = e.get("match");
            String op = m.path("op").asText();
            String left = renderValue(m.get("left"), false);
            boolean mark = m.get("left").has("meta") && m.get("left").get("meta").path("key").asText().equals("mark");
            String right = renderValue(m.get("right"), mark);
            return left + (op.equals("==") ? "" : " " + op) + " " + right;
        }
        for (String verdict : List.of("accept", "drop", "return", "continue")) {
            if (e.has(verdict)) {
                return verdict;
            }
        }
        if (e.has("masquerade")) {
            JsonNode flags = e.get("masquerade").path("flags");
            if (flags.isMissingNode() || flags.isNull()) {
                return "masquerade";
            }
            List<String> f = new ArrayList<>();
            if (flags.isArray()) {
                flags.forEach(x -> f.add(x.asText()));
            } else {
                f.add(flags.asText());
            }
            return "masquerade " + String.join(" ", f);
        }
        throw new IllegalArgumentException("nft JSON: statement not rendered: " + e);
    }

    private static String renderValue(JsonNode v, boolean hex) {
        if (v.has("payload")) {
            return v.get("payload").path("protocol").asText() + " " + v.get("payload").path("field").asText();
        }
        if (v.has("meta")) {
            return "meta " + v.get("meta").path("key").asText();
        }
        if (v.has("prefix")) {
            return v.get("prefix").path("addr").asText() + "/" + v.get("prefix").path("len").asInt();
        }
        if (v.isNumber()) {
            return hex ? "0x" + Long.toHexString(v.asLong()) : v.asText();
        }
        if (v.isTextual()) {
            return v.asText();
        }
        throw new IllegalArgumentException("nft JSON: value not rendered: " + v);
    }

    private static String text(JsonNode n, String field) {
        return n.has(field) ? n.get(field).asText() : null;
    }
}
