/**
 * The project's only door to the Linux kernel.
 *
 * <p>Three layers, as OSHI and Netty cut theirs: {@code internal} holds the raw JNA libc bindings
 * ({@code LibC}), the close-once descriptor ({@code Fd}) and the byte-level netlink socket; this
 * package holds the pure-Java rtnetlink codec ({@code NlWriter}, {@code NlAttrs} and one codec per
 * message family, unit-tested against bytes captured from iproute2), the request/ACK loop
 * ({@code NlChannel}) and the public API: {@link org.jflannel.linuxnet.RtNetlink},
 * {@link org.jflannel.linuxnet.NetlinkMonitor}, {@link org.jflannel.linuxnet.TunDevice},
 * {@link org.jflannel.linuxnet.NetNs}, {@link org.jflannel.linuxnet.Sysctl} and their records, and
 * for packet paths {@link org.jflannel.linuxnet.UdpBatchSocket} (UDP GSO/GRO, {@code recvmmsg}),
 * {@link org.jflannel.linuxnet.DatagramBatch} and {@link org.jflannel.linuxnet.IoVec} (scatter/gather
 * over direct buffers, also for {@code TunDevice.writev}). Nothing outside this module sees JNA.
 *
 * <p>Every kernel failure is a {@link org.jflannel.linuxnet.NetlinkException} naming the operation,
 * the object, errno and the kernel's extended-ack text. Verbs keep their promise: {@code replace*}
 * is create-or-replace, {@code delete*} is quiet when the object (or its device) is already gone.
 */
package org.jflannel.linuxnet;
