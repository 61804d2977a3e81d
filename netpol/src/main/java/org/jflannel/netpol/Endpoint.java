package org.jflannel.netpol;

/** One end of a packet: a pod (and the address of it the packet carries), or an address outside every pod. */
public record Endpoint(PodInfo pod, Addr addr) {
    public Endpoint {
        if (addr == null) {
            throw new IllegalArgumentException("addr: must not be null");
        }
        if (pod != null && !pod.ips().contains(addr)) {
            throw new IllegalArgumentException("addr: " + addr + " is not an address of pod " + pod.id());
        }
    }

    public static Endpoint of(PodInfo pod, Addr addr) {
        return new Endpoint(pod, addr);
    }

    public static Endpoint external(Addr addr) {
        return new Endpoint(null, addr);
    }
}
