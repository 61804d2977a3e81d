package org.jflannel.linuxnet.netns;

import org.jflannel.testbase.NetnsPrivilege;

/**
 * Run by {@link PrivilegeIT} in a child JVM whose capabilities were dropped: prints what the
 * netns fixture and our kernel door do without CAP_NET_ADMIN/CAP_SYS_ADMIN. Changes nothing on the
 * host: every attempt is expected to be refused.
 */
public final class NoPrivilegeProbe {
    private NoPrivilegeProbe() {
    }

    public static void main(String[] args) {
        System.setProperty("jflannel.integration", "true");
        try {
            NetnsPrivilege.require();
            System.out.println("fixture: passed");
        } catch (Throwable t) {
            System.out.println("fixture: " + t.getClass().getName() + ": " + t.getMessage());
        }
        try (NetNs ns = NetNs.create(args[0])) {
            System.out.println("netns: created " + ns.name());
            ns.delete();
        } catch (Exception e) {
            System.out.println("netns: " + e.getClass().getName() + ": " + e.getMessage());
        }
    }
}
