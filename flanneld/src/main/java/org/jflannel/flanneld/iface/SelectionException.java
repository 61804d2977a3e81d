package org.jflannel.flanneld.iface;

/** No usable external interface; the message is the fatal log line (REFERENCE §1), exit 1. */
public final class SelectionException extends Exception {
    private static final long serialVersionUID = 1L;

    public SelectionException(String message) {
        super(message);
    }
}
