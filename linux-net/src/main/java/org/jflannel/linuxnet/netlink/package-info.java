/**
 * rtnetlink, in pure Java over the {@code internal} netlink socket: the message writer and attribute
 * reader ({@code NlWriter}, {@code NlAttrs}), one codec per message family (links, addresses, routes,
 * neighbours/FDB, events), unit-tested against bytes captured from iproute2, and the request/ACK loop
 * ({@code NlChannel}). The public API is {@link org.jflannel.linuxnet.netlink.RtNetlink} (one request
 * at a time), {@link org.jflannel.linuxnet.netlink.Batch} (many pipelined requests, one ACK each),
 * {@link org.jflannel.linuxnet.netlink.NetlinkMonitor} (the multicast change events as
 * {@link org.jflannel.linuxnet.netlink.NetlinkEvent}s), the records the kernel objects are read into and
 * written from ({@code Link}, {@code Address}, {@code Route}, {@code Neighbour}, {@code FdbEntry},
 * {@code VxlanSpec}, {@code VxlanInfo}, and {@link org.jflannel.linuxnet.netlink.IpPrefix}, the
 * address-with-prefix of addresses and routes), and {@code WireguardGenl}, the encoding of WireGuard's
 * generic netlink requests.
 */
package org.jflannel.linuxnet.netlink;
