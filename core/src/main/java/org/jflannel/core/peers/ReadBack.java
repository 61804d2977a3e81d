package org.jflannel.core.peers;

import java.util.List;
import java.util.Objects;

/**
 * What a backend's kernel side found when it read its entries back (a dump): the wanted entries that are
 * absent or wrong, the strays (entries of the kind the backend writes that no lease wants; each removes
 * itself and logs), and how many parts of the device itself were put right on the way (MTU, up).
 */
public record ReadBack<E>(List<Missing<E>> missing, List<Runnable> strays, int fixed) {

    /** An entry with {@code parts} (≥ 1) of it absent or wrong: repairing it counts that many repairs. */
    public record Missing<E>(E entry, int parts) {
        public Missing {
            Objects.requireNonNull(entry, "entry");
            if (parts < 1) {
                throw new IllegalArgumentException("parts must be >= 1, got " + parts);
            }
        }
    }

    public ReadBack {
        missing = List.copyOf(missing);
        strays = List.copyOf(strays);
        if (fixed < 0) {
            throw new IllegalArgumentException("fixed must be >= 0, got " + fixed);
        }
    }

    public static <E> ReadBack<E> nothing() {
        return new ReadBack<>(List.of(), List.of(), 0);
    }
}
