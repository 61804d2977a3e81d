/**
 * The Kubernetes lease source (REFERENCE §4): {@link org.jflannel.subnet.kube.KubeSubnetManager}.
 *
 * <p>What the daemon does with it:
 * <pre>{@code
 * KubeOptions o = KubeOptions.defaults()
 *         .withApiAccess(kubeconfigFile, kubeApiUrl)          // --kubeconfig-file, --kube-api-url
 *         .withAnnotationPrefix(prefix)                       // --kube-annotation-prefix
 *         .withNetConfPath(netConfPath)                       // --net-config-path
 *         .withSetNodeNetworkUnavailable(setUnavailable);     // --set-node-network-unavailable
 * try (KubeSubnetManager subnets = KubeSubnetManager.create(o, System.getenv())) {  // start-up errors: §4.1
 *     NetConf conf = subnets.networkConfig();
 *     Optional<String> publicIp = subnets.nodePublicIp();     // node-public-ip overrides --public-ip (§1)
 *     Optional<MacAddress> mac = subnets.storedVtepMac(false); // VtepMAC to reuse (§6.3), true for IPv6
 *     Lease own = subnets.acquireLease(attrs);                 // annotates the node, returns its podCIDR(s)
 *     Subscription s = subnets.watchLeases(batches -> ...);    // snapshot, then changes, thread kube-lease-events
 *     subnets.completeLease(own);                              // NetworkUnavailable=False
 * }
 * }</pre>
 * Threads: informer callbacks on {@code kube-client-N} (the client's executor), deliveries on
 * {@code kube-lease-events}. Only {@code KubeSubnetManager}, {@code KubeOptions}, {@code KubeEnv},
 * {@code KubeAnnotations} and {@code KubeClients} are public.
 */
package org.jflannel.subnet.kube;
