package org.jflannel.netpol;

/**
 * One NetworkPolicyPort: a protocol and every port of it ({@code number} and {@code name} both null), one
 * port or a range ({@code number} to {@code endPort}), or a named container port ({@code name}), which
 * is resolved against the destination pod's container ports of the same protocol.
 */
public record PolicyPort(Protocol protocol, Integer number, String name, Integer endPort) {
    public PolicyPort {
        if (protocol == null) {
            throw new IllegalArgumentException("protocol: must not be null");
        }
        if (number != null && name != null) {
            throw new IllegalArgumentException("port: either a number or a name, got both");
        }
        if (number != null && (number < 1 || number > 65535)) {
            throw new IllegalArgumentException("port: expected 1..65535, got " + number);
        }
        if (name != null && name.isEmpty()) {
            throw new IllegalArgumentException("port: a named port must not be empty");
        }
        if (endPort != null) {
            if (number == null) {
                throw new IllegalArgumentException("endPort: needs a numeric port, got " + (name == null ? "none" : "\"" + name + "\""));
            }
            if (endPort < number || endPort > 65535) {
                throw new IllegalArgumentException("endPort: expected " + number + "..65535, got " + endPort);
            }
        }
    }

    /** Every port of {@code protocol}. */
    public static PolicyPort all(Protocol protocol) {
        return new PolicyPort(protocol, null, null, null);
    }

    public static PolicyPort number(Protocol protocol, int port) {
        return new PolicyPort(protocol, port, null, null);
    }

    public static PolicyPort range(Protocol protocol, int from, int to) {
        return new PolicyPort(protocol, from, null, to);
    }

    public static PolicyPort named(Protocol protocol, String name) {
        return new PolicyPort(protocol, null, name, null);
    }

    public boolean isNamed() {
        return name != null;
    }

    /** The first port this entry takes (1 for all ports). Not for a named port. */
    public int from() {
        return number == null ? 1 : number;
    }

    /** The last port this entry takes. Not for a named port. */
    public int to() {
        return number == null ? 65535 : endPort == null ? number : endPort;
    }
}
