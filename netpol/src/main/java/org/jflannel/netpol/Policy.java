package org.jflannel.netpol;

import java.util.List;

/**
 * A NetworkPolicy as enforced: the pods of {@code namespace} it selects, whether it isolates them for
 * ingress and for egress ({@code policyTypes}, defaulted as the API does: Ingress always, Egress when there
 * are egress rules), and the rules that allow traffic in each direction.
 */
public record Policy(String namespace, String name, LabelSelector podSelector, boolean ingress, boolean egress,
                     List<PolicyRule> ingressRules, List<PolicyRule> egressRules) {
    public Policy {
        if (namespace == null || namespace.isEmpty() || name == null || name.isEmpty()) {
            throw new IllegalArgumentException("metadata: a policy needs a namespace and a name");
        }
        ingressRules = List.copyOf(ingressRules);
        egressRules = List.copyOf(egressRules);
    }

    /** {@code policyTypes} absent: Ingress, and Egress when {@code egressRules} is non-empty. */
    public static Policy defaulted(String namespace, String name, LabelSelector podSelector, List<PolicyRule> ingressRules,
                                   List<PolicyRule> egressRules) {
        return new Policy(namespace, name, podSelector, true, !egressRules.isEmpty(), ingressRules, egressRules);
    }

    public String id() {
        return namespace + "/" + name;
    }

    /** Whether this policy applies to {@code p} (a pod of its namespace its selector matches). */
    public boolean selects(PodInfo p) {
        return p.namespace().equals(namespace) && podSelector.matches(p.labels());
    }
}
