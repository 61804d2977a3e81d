package org.jflannel.backend.udp;

import java.util.Locale;
import java.util.Optional;

/**
 * What the udp backend's kernel datapath ({@link KernelPath}) does, {@code JFLANNEL_UDP_KERNEL} ({@link UdpOptions}).
 * {@link #toString()} is the variable's spelling ({@code off}, {@code encap}, {@code gpe}, {@code full}).
 */
public enum UdpKernelMode {
    /** No programs: the packet threads carry everything ({@code off}, {@code 0}, {@code false}, {@code no}). */
    OFF,
    /** The kernel encapsulates; the packet threads decapsulate ({@code encap}). */
    ENCAP,
    /**
     * The kernel encapsulates, and decapsulates through a VXLAN-GPE device ({@code gpe}, the default since session 11);
     * {@link #ENCAP} where that device cannot be made or does not deliver.
     */
    GPE,
    /** The kernel encapsulates and decapsulates with adjust_room ({@code full}, {@code 1}, {@code on}, {@code true}, {@code yes}). */
    FULL;

    /**
     * The mode a value of {@code JFLANNEL_UDP_KERNEL} names (case and surrounding blanks ignored), or empty for an
     * unknown value; a blank one is the caller's to default.
     */
    static Optional<UdpKernelMode> parse(String value) {
        return Optional.ofNullable(switch (value.strip().toLowerCase(Locale.ROOT)) {
            case "0", "false", "off", "no" -> OFF;
            case "1", "true", "on", "yes", "full" -> FULL;
            case "encap" -> ENCAP;
            case "gpe" -> GPE;
            default -> null;
        });
    }

    /** Whether the programs are attached at all. */
    public boolean attached() {
        return this != OFF;
    }

    /**
     * Whether this mode needs flannel0's offloads: in {@link #ENCAP} and {@link #GPE} the packet threads write a peer
     * kernel's whole super-packets to flannel0 (ENCAP always, GPE until it is confirmed and after a fallback).
     */
    public boolean needsOffload() {
        return this == ENCAP || this == GPE;
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
