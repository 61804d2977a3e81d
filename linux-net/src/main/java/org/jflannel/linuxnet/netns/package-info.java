/**
 * Named network namespaces under /run/netns, made and removed as {@code ip netns add/delete} does:
 * {@link org.jflannel.linuxnet.netns.NetNs} runs work on a thread that lives in the namespace (sockets
 * opened there stay bound to it), and {@code NetNsMounts} does the mount work behind it, after
 * iproute2's ip/ipnetns.c.
 */
package org.jflannel.linuxnet.netns;
