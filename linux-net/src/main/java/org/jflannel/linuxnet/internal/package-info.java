/**
 * The raw JNA bindings the other packages of linux-net build on: libc ({@code LibC}, and
 * {@code LibCQuiet} for calls whose failure is a frequent, expected outcome), bpf(2)
 * ({@code BpfSys}), the close-once descriptor ({@code Fd}), errno names ({@code Errno}) and the
 * byte-level netlink socket ({@code NetlinkSocket}). Public only because the packages beside it use
 * it; the build bans imports of it, as of JNA itself, outside linux-net.
 */
package org.jflannel.linuxnet.internal;
