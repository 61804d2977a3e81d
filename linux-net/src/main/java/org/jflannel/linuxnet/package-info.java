/**
 * The project's only door to the Linux kernel, cut by concern into one package per kernel interface:
 * {@link org.jflannel.linuxnet.netlink} (rtnetlink: links, addresses, routes, neighbours, FDB,
 * batches, the change monitor; WireGuard's generic netlink encoding), {@link org.jflannel.linuxnet.tun}
 * (TUN devices), {@link org.jflannel.linuxnet.socket} (batched UDP and raw ICMP sockets, scatter/gather
 * lists), {@link org.jflannel.linuxnet.bpf} (an eBPF assembler, maps, programs, tcx links),
 * {@link org.jflannel.linuxnet.netns} (named network namespaces) and {@link org.jflannel.linuxnet.sys}
 * (sysctl, sd_notify); {@code internal} holds the raw JNA bindings, and nothing outside this module
 * sees JNA (the build enforces it). This package holds what they all share:
 * {@link org.jflannel.linuxnet.NetlinkException}, the one failure type of every kernel call (netlink
 * or system call: operation, object, errno and the kernel's extended-ack text), and
 * {@link org.jflannel.linuxnet.Names}, the validation of interface and namespace names. Verbs keep
 * their promise: {@code replace*} is create-or-replace, {@code delete*} is quiet when the object (or
 * its device) is already gone.
 */
package org.jflannel.linuxnet;
