package org.jflannel.core;

/**
 * Bad input from a file, a lease, an annotation or the environment. The message names the
 * source and the field ({@code net-conf.json: Backend.VNI: expected 1..16777215, got "x"}),
 * so the operator can fix it without reading code. The only exception our parsers throw.
 */
public class ConfigException extends Exception {
    private static final long serialVersionUID = 1L;
    private final String field;

    public ConfigException(String field, String message) {
        super(message);
        this.field = field;
    }

    public ConfigException(String field, String message, Throwable cause) {
        super(message, cause);
        this.field = field;
    }

    /** The field the problem is in, e.g. {@code Backend.VNI}, or "" when it concerns the whole input. */
    public String field() {
        return field;
    }
}
