package org.jflannel.flanneld.iptables;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** One rule: table, chain and the rule spec after {@code -A <chain>} (e.g. {@code -s 10.244.0.0/16 ... -j ACCEPT}). */
public record IptRule(String table, String chain, List<String> spec) {
    public IptRule {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(chain, "chain");
        spec = List.copyOf(spec);
        if (spec.isEmpty()) {
            throw new IllegalArgumentException("rule in " + table + "/" + chain + " has no spec");
        }
    }

    /** The flannel chain this rule lives in or jumps to ({@code FLANNEL-POSTRTG}, {@code FLANNEL-FWD}). */
    public String flannelChain() {
        return chain.startsWith("FLANNEL-") ? chain : spec.get(spec.size() - 1);
    }

    /** {@code <action> <chain> <spec...>}, as one line of an iptables-restore payload or an iptables command. */
    public List<String> withAction(String action) {
        List<String> out = new ArrayList<>(spec.size() + 2);
        out.add(action);
        out.add(chain);
        out.addAll(spec);
        return out;
    }

    @Override
    public String toString() {
        return "-t " + table + " " + String.join(" ", withAction("-A"));
    }
}
