/**
 * TUN devices through /dev/net/tun: {@link org.jflannel.linuxnet.tun.TunDevice} creates one (also
 * multi-queue), reads and writes packets over direct buffers (gathered writes through the
 * {@code socket} package's {@code IoVec}) and gives it the overlay address and route through rtnetlink.
 */
package org.jflannel.linuxnet.tun;
