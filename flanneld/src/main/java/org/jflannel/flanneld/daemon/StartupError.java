package org.jflannel.flanneld.daemon;

/** A fatal start-up error (REFERENCE §9.3): the message is logged and the daemon exits 1. */
public final class StartupError extends Exception {
    private static final long serialVersionUID = 1L;

    public StartupError(String message) {
        super(message);
    }

    public StartupError(String message, Throwable cause) {
        super(message, cause);
    }
}
