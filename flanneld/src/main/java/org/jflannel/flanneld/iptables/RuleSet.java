package org.jflannel.flanneld.iptables;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One ordered set of rules of one family (v4 masquerade, v4 forward, v6 ...) and the verbs upstream
 * applies to it: bootstrap (chain created if missing; rules that exist are deleted and re-appended
 * in the same {@code iptables-restore --noflush} transaction, so the order is ours and nothing
 * slips in between), ensure (every rule {@code -C}-checked, the whole set rebuilt when one is
 * missing) and teardown (delete what exists).
 */
final class RuleSet {
    private static final Logger LOG = LoggerFactory.getLogger(RuleSet.class);

    private final String name;
    private final IptablesCli cli;
    private final List<IptRule> rules;

    RuleSet(String name, IptablesCli cli, List<IptRule> rules) {
        this.name = name;
        this.cli = cli;
        this.rules = List.copyOf(rules);
    }

    String name() {
        return name;
    }

    List<IptRule> rules() {
        return rules;
    }

    void bootstrap() throws IOException, InterruptedException {
        for (String[] chain : flannelChains(rules)) {
            cli.ensureChain(chain[0], chain[1]);
        }
        Set<IptRule> existing = new LinkedHashSet<>();
        for (IptRule r : rules) {
            if (cli.exists(r)) {
                existing.add(r);
            }
        }
        cli.restore(RestorePayload.build(bootstrapLines(rules, existing::contains)));
        LOG.info("iptables rules in place set={} rules={} readded={}", name, rules.size(), existing.size());
    }

    /** Returns true when rules were missing and the set was rebuilt. */
    boolean ensure() throws IOException, InterruptedException {
        for (IptRule r : rules) {
            if (!cli.exists(r)) {
                LOG.info("Some iptables rules are missing; deleting and recreating rules set={} missing={}", name, r);
                bootstrap();
                return true;
            }
        }
        return false;
    }

    void teardown() throws IOException, InterruptedException {
        Map<String, List<List<String>>> lines = new LinkedHashMap<>();
        for (IptRule r : rules) {
            if (cli.chainExists(r.table(), r.flannelChain()) && cli.exists(r)) {
                lines.computeIfAbsent(r.table(), t -> new ArrayList<>()).add(r.withAction("-D"));
            }
        }
        if (!lines.isEmpty()) {
            cli.restore(RestorePayload.build(lines));
            LOG.info("iptables rules removed set={} rules={}", name, lines.values().stream().mapToInt(List::size).sum());
        }
    }

    /** The bootstrap transaction: per rule, {@code -D} first when it exists, then {@code -A}; tables in first-use order. */
    static Map<String, List<List<String>>> bootstrapLines(List<IptRule> rules, Predicate<IptRule> exists) {
        Map<String, List<List<String>>> lines = new LinkedHashMap<>();
        for (IptRule r : rules) {
            List<List<String>> table = lines.computeIfAbsent(r.table(), t -> new ArrayList<>());
            if (exists.test(r)) {
                table.add(r.withAction("-D"));
            }
            table.add(r.withAction("-A"));
        }
        return lines;
    }

    private static List<String[]> flannelChains(List<IptRule> rules) {
        Map<String, String[]> chains = new LinkedHashMap<>();
        for (IptRule r : rules) {
            chains.putIfAbsent(r.table() + "/" + r.flannelChain(), new String[] {r.table(), r.flannelChain()});
        }
        return List.copyOf(chains.values());
    }
}
