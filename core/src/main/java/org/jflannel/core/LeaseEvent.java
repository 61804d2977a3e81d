package org.jflannel.core;

import java.util.Objects;

/** A lease appeared or changed ({@link Type#ADDED}) or went away ({@link Type#REMOVED}). */
public record LeaseEvent(Type type, Lease lease) {

    public enum Type { ADDED, REMOVED }

    public LeaseEvent {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(lease, "lease");
    }

    public static LeaseEvent added(Lease lease) {
        return new LeaseEvent(Type.ADDED, lease);
    }

    public static LeaseEvent removed(Lease lease) {
        return new LeaseEvent(Type.REMOVED, lease);
    }
}
