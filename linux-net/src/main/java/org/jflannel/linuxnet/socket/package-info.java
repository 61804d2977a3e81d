/**
 * Sockets for packet paths, with the kernel's batching: {@link org.jflannel.linuxnet.socket.UdpBatchSocket}
 * (UDP with GSO/GRO, {@code recvmmsg} into a {@link org.jflannel.linuxnet.socket.DatagramBatch}),
 * {@link org.jflannel.linuxnet.socket.IoVec} (scatter/gather over direct buffers, also for the TUN
 * device's {@code writev}), and the raw ICMPv4 echo prober: {@link org.jflannel.linuxnet.socket.IcmpSocket}
 * with its send and receive batches ({@code IcmpEchoBatch}, {@code IcmpBatch}), the pure-Java codec
 * ({@code IcmpCodec}, {@code PayloadSums}) and the decoded {@code IcmpMessage}.
 */
package org.jflannel.linuxnet.socket;
