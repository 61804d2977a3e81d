package org.jflannel.netpol;

import java.util.List;

/**
 * One NetworkPolicyPeer: pods by {@code podSelector} in the policy's namespace, all pods of the namespaces
 * {@code namespaceSelector} selects, the pods {@code podSelector} selects in those (both set: AND), or the
 * addresses of an {@code ipBlock} (then neither selector).
 */
public record PolicyPeer(LabelSelector podSelector, LabelSelector namespaceSelector, IpBlock ipBlock) {
    public PolicyPeer {
        boolean selectors = podSelector != null || namespaceSelector != null;
        if (ipBlock != null && selectors) {
            throw new IllegalArgumentException("ipBlock: may not be combined with podSelector or namespaceSelector");
        }
        if (ipBlock == null && !selectors) {
            throw new IllegalArgumentException("peer: needs podSelector, namespaceSelector or ipBlock");
        }
    }

    public static PolicyPeer pods(LabelSelector podSelector) {
        return new PolicyPeer(podSelector, null, null);
    }

    public static PolicyPeer namespaces(LabelSelector namespaceSelector) {
        return new PolicyPeer(null, namespaceSelector, null);
    }

    public static PolicyPeer podsInNamespaces(LabelSelector namespaceSelector, LabelSelector podSelector) {
        return new PolicyPeer(podSelector, namespaceSelector, null);
    }

    public static PolicyPeer block(IpBlock block) {
        return new PolicyPeer(null, null, block);
    }

    /** Whether pod {@code p} (in a namespace labelled {@code nsLabels}) is a peer of a policy of {@code policyNamespace}. */
    public boolean selects(String policyNamespace, PodInfo p, java.util.Map<String, String> nsLabels) {
        if (ipBlock != null) {
            return false;
        }
        boolean ns = namespaceSelector == null ? p.namespace().equals(policyNamespace) : namespaceSelector.matches(nsLabels);
        return ns && (podSelector == null || podSelector.matches(p.labels()));
    }

    /** An ipBlock: {@code cidr} less every {@code except} (each inside it, of the same family). */
    public record IpBlock(Cidr cidr, List<Cidr> except) {
        public IpBlock {
            except = List.copyOf(except);
            for (Cidr e : except) {
                if (!cidr.contains(e)) {
                    throw new IllegalArgumentException("except: " + e + " is not inside cidr " + cidr);
                }
            }
        }

        public boolean contains(Addr a) {
            return cidr.contains(a) && except.stream().noneMatch(e -> e.contains(a));
        }
    }
}
