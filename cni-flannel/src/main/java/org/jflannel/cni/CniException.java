package org.jflannel.cni;

/**
 * A CNI error (SPEC "Error"): code, msg, details. Codes below 100 are the specification's
 * (REFERENCE §12); 999 is the library's "internal" code, used for every error that is not a
 * CNI error of its own, as upstream's skel does.
 */
final class CniException extends Exception {
    private static final long serialVersionUID = 1L;

    static final int INCOMPATIBLE_VERSION = 1;
    static final int UNKNOWN_CONTAINER = 3;
    static final int INVALID_ENVIRONMENT = 4;
    static final int IO_FAILURE = 5;
    static final int DECODING_FAILURE = 6;
    static final int INVALID_CONFIG = 7;
    static final int INVALID_NETNS = 8;
    static final int NOT_AVAILABLE = 50;
    static final int INTERNAL = 999;

    private final long code;
    private final String details;
    private final boolean typed;

    CniException(long code, String msg, String details) {
        this(code, msg, details, true);
    }

    private CniException(long code, String msg, String details, boolean typed) {
        super(msg, null, false, false);
        this.code = code;
        this.details = details == null ? "" : details;
        this.typed = typed;
    }

    CniException(long code, String msg) {
        this(code, msg, "");
    }

    /** An error that is not a CNI error: code 999, as skel wraps it. */
    static CniException internal(String msg) {
        return new CniException(INTERNAL, msg, "", false);
    }

    /**
     * Go's {@code fmt.Errorf(prefix + "%w", err)}: a CNI error (ours or the delegate's) passes
     * through unchanged, as skel unwraps it; a plain error gets the prefix.
     */
    CniException wrap(String prefix) {
        return typed ? this : internal(prefix + getMessage());
    }

    /** True for an error that is a CNI error in its own right (not a plain error given code 999). */
    boolean typed() {
        return typed;
    }

    long code() {
        return code;
    }

    String msg() {
        return getMessage();
    }

    String details() {
        return details;
    }

    /** The error JSON (REFERENCE §11.7, Ours: cniVersion first), MarshalIndent, no trailing newline. */
    byte[] toJson(String cniVersion) {
        GoJsonWriter.Fields f = new GoJsonWriter.Fields().with("cniVersion", cniVersion).with("code", code).with("msg", msg());
        if (!details.isEmpty()) {
            f.put("details", details);
        }
        return GoJsonWriter.indent(f);
    }
}
