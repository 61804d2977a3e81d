package org.jflannel.core.peers;

import java.io.IOException;
import java.util.Collection;
import java.util.List;
import org.jflannel.core.Lease;

/**
 * The kernel side of a backend: what {@link PeerLoop} needs to keep the kernel in step with the
 * leases. The backend says which entries a lease wants, writes and deletes them, and reads them back;
 * the loop decides when (and remembers what is programmed). Every method runs on the daemon's
 * {@code lease-events} thread. Entries are values ({@code equals}/{@code hashCode}): the loop compares
 * plans and keeps the set of entries that failed to write.
 *
 * @param <E> one unit the backend writes as a whole: vxlan a peer family's neighbour + FDB entry + route,
 *            host-gw a route, udp a peer of its table, wireguard a peer of its userspace device, extension the
 *            operator's commands for a lease
 */
public interface PeerKernel<E> {

    /** What a peer lease (never our own) asks of the kernel; may ask the kernel a question (a route lookup). */
    LeasePlan<E> plan(Lease lease);

    /**
     * A lease went away that the loop holds no plan for (skipped earlier, or programmed by an earlier
     * run): the entries it would have had, to delete all the same; empty for none.
     */
    List<E> forgotten(Lease lease);

    /** For the {@code lease added …} and {@code lease removed …} lines: {@code subnet=10.244.3.0/24 …}. */
    String describe(E entry);

    /**
     * Writes {@code entries} (create or replace: idempotent) with the backend's retries; returns those that
     * failed, each already logged and counted here.
     */
    List<E> write(List<E> entries, Writing<E> how) throws InterruptedException;

    /**
     * One attempt at an entry a reconcile found absent or wrong (the pass is itself the retry); logs
     * the repair. {@code failedBefore}: its last write failed too.
     */
    boolean repair(ReadBack.Missing<E> missing, boolean failedBefore) throws InterruptedException;

    /**
     * Whether a changed lease's stale entry stays rather than being deleted first. {@code next} holds the
     * lease's new entries (written right after: a WireGuard peer under the same public key is updated in
     * place and keeps its sessions), or nothing when the lease is now skipped (unusable, another backend's);
     * what stays is no longer the loop's to remove. Upstream's extension backend never runs the remove
     * command on a change, and its wireguard backend leaves a peer whose lease turned unusable.
     * Default: no, deleted first.
     */
    default boolean keepsOnChange(E stale, List<E> next) {
        return false;
    }

    /** Deletes an entry, quietly when it is gone; a failure is logged and counted here. */
    void delete(E entry);

    /** Before a reconcile pass: makes sure the device(s) are there (re-creating or following them). */
    Devices devices() throws IOException, InterruptedException;

    /**
     * Reads the kernel back: which of {@code desired} are absent or wrong, and (only with
     * {@code withStrays}, once the first complete lease list is applied) the strays.
     */
    ReadBack<E> readBack(Collection<E> desired, boolean withStrays) throws IOException, InterruptedException;
}
