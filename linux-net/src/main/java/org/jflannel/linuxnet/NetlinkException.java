package org.jflannel.linuxnet;

import java.io.IOException;
import org.jflannel.linuxnet.internal.Errno;

/**
 * Every kernel failure, netlink or system call: the operation, the object it was about, errno and
 * the kernel's extended-ack text. Message: {@code RTM_NEWROUTE 10.244.3.0/24 via 10.244.3.0 dev flannel.1: EEXIST (17): <ext ack>}.
 */
public final class NetlinkException extends IOException {
    private static final long serialVersionUID = 1L;

    private final String operation;
    private final String object;
    private final int errno;
    private final String kernelMessage;

    public NetlinkException(String operation, String object, int errno, String kernelMessage) {
        super(format(operation, object, errno, kernelMessage));
        this.operation = operation;
        this.object = object == null ? "" : object;
        this.errno = errno;
        this.kernelMessage = kernelMessage == null ? "" : kernelMessage;
    }

    private static String format(String operation, String object, int errno, String kernelMessage) {
        StringBuilder sb = new StringBuilder(operation);
        if (object != null && !object.isEmpty()) {
            sb.append(' ').append(object);
        }
        sb.append(": ").append(Errno.name(errno)).append(" (").append(errno).append(')');
        if (kernelMessage != null && !kernelMessage.isEmpty()) {
            sb.append(": ").append(kernelMessage);
        }
        return sb.toString();
    }

    public String operation() {
        return operation;
    }

    public String object() {
        return object;
    }

    public int errno() {
        return errno;
    }

    public String errnoName() {
        return Errno.name(errno);
    }

    /** The kernel's extended-ack message, or "" when it sent none. */
    public String kernelMessage() {
        return kernelMessage;
    }
}
