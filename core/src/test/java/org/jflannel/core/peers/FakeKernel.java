package org.jflannel.core.peers;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.jflannel.core.Lease;

/**
 * A fake of our own {@link PeerKernel}: one entry per lease, {@code <subnet>@<public IP>}, held in a set that
 * stands for the kernel's table. The netns ITs of the backends test the real kernel side.
 */
final class FakeKernel implements PeerKernel<String> {
    /** What the "kernel" holds. */
    final Set<String> table = new LinkedHashSet<>();
    /** Writes and deletes in order: {@code +e}, {@code -e}, {@code repair e}. */
    final List<String> calls = new ArrayList<>();
    /** Entries the kernel refuses to take. */
    final Set<String> refuse = new HashSet<>();
    /** Public IPs refused at plan time (not on our segment, say). */
    final Set<String> unreachable = new HashSet<>();
    final List<Writing<String>> writings = new ArrayList<>();
    Devices devices = Devices.READY;
    /** Entries of one subnet are one slot: a new one updates the old in place (as a WireGuard peer's key). */
    boolean inPlace;
    /** Entries stay when their lease turns unusable (as upstream's extension and wireguard backends). */
    boolean keepWhenSkipped;
    /** The dump fails. */
    boolean readFails;

    static String entry(Lease lease) {
        return lease.subnet() + "@" + lease.attrs().publicIp().getHostAddress();
    }

    @Override
    public LeasePlan<String> plan(Lease lease) {
        if (!"fake".equals(lease.attrs().backendType())) {
            return LeasePlan.ignored("ignoring lease of type " + lease.attrs().backendType());
        }
        if (lease.attrs().publicIp() == null) {
            return LeasePlan.skipped("lease without a public IP");
        }
        if (unreachable.contains(lease.attrs().publicIp().getHostAddress())) {
            return LeasePlan.of(lease, List.of(), List.of("unreachable"));
        }
        return LeasePlan.of(lease, List.of(entry(lease)));
    }

    @Override
    public List<String> forgotten(Lease lease) {
        return lease.attrs().publicIp() == null ? List.of() : List.of(entry(lease));
    }

    @Override
    public String describe(String entry) {
        return "entry=" + entry;
    }

    @Override
    public List<String> write(List<String> entries, Writing<String> how) {
        writings.add(how);
        List<String> failed = new ArrayList<>();
        for (String e : entries) {
            calls.add("+" + e);
            if (refuse.contains(e)) {
                failed.add(e);
            } else {
                if (inPlace) {
                    table.removeIf(have -> sameSlot(have, e));
                }
                table.add(e);
            }
        }
        return failed;
    }

    @Override
    public boolean repair(ReadBack.Missing<String> missing, boolean failedBefore) {
        calls.add("repair " + missing.entry());
        if (refuse.contains(missing.entry())) {
            return false;
        }
        table.add(missing.entry());
        return true;
    }

    @Override
    public boolean keepsOnChange(String stale, List<String> next) {
        return next.isEmpty() ? keepWhenSkipped : inPlace && next.stream().anyMatch(n -> sameSlot(stale, n));
    }

    private static boolean sameSlot(String a, String b) {
        return a.substring(0, a.indexOf('@')).equals(b.substring(0, b.indexOf('@')));
    }

    @Override
    public void delete(String entry) {
        calls.add("-" + entry);
        table.remove(entry);
    }

    @Override
    public Devices devices() {
        Devices d = devices;
        if (d == Devices.RENEWED) {
            devices = Devices.READY; // re-created once
        }
        return d;
    }

    @Override
    public ReadBack<String> readBack(Collection<String> desired, boolean withStrays) throws java.io.IOException {
        if (readFails) {
            throw new java.io.IOException("dump failed");
        }
        List<ReadBack.Missing<String>> missing = new ArrayList<>();
        for (String d : desired) {
            if (!table.contains(d)) {
                missing.add(new ReadBack.Missing<>(d, 1));
            }
        }
        List<Runnable> strays = new ArrayList<>();
        if (withStrays) {
            for (String have : List.copyOf(table)) {
                if (!desired.contains(have)) {
                    strays.add(() -> delete(have));
                }
            }
        }
        return new ReadBack<>(missing, strays, 0);
    }
}
