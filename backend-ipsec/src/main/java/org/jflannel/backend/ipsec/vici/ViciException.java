package org.jflannel.backend.ipsec.vici;

import java.io.IOException;

/** A VICI failure: a malformed packet, a command charon does not know, or {@code success=no} with its errmsg. */
public class ViciException extends IOException {
    public ViciException(String message) {
        super(message);
    }

    public ViciException(String message, Throwable cause) {
        super(message, cause);
    }
}
