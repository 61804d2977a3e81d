package org.jflannel.netpol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.EnumMap;
import java.util.Map;

/**
 * The packets the table's chains dropped, per direction: its named counters ({@link NftScript#dropCounter}) as
 * {@code nft -j list counters table inet jflannel-netpol} prints them. A counter missing from the listing is 0
 * (a table from before the counters, or none yet).
 */
public final class DropCounters {
    private static final ObjectMapper JSON = new ObjectMapper();

    private DropCounters() {
    }

    /** The command that lists them. */
    public static java.util.List<String> command() {
        return java.util.List.of("nft", "-j", "list", "counters", "table", "inet", NftScript.TABLE);
    }

    /** Packets dropped per direction, from the listing; throws naming what is wrong with it. */
    public static Map<Direction, Long> parse(String json) throws IOException {
        Map<Direction, Long> out = new EnumMap<>(Direction.class);
        for (Direction d : Direction.values()) {
            out.put(d, 0L);
        }
        JsonNode root = JSON.readTree(json);
        if (root == null || !root.path("nftables").isArray()) {
            throw new IOException("nft -j list counters: no \"nftables\" array");
        }
        for (JsonNode o : root.path("nftables")) {
            JsonNode c = o.path("counter");
            if (!c.isObject() || !NftScript.TABLE.equals(c.path("table").asText())) {
                continue;
            }
            for (Direction d : Direction.values()) {
                if (NftScript.dropCounter(d).equals(c.path("name").asText())) {
                    out.put(d, c.path("packets").asLong());
                }
            }
        }
        return out;
    }
}
