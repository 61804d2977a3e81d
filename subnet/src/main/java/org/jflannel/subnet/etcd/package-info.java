/**
 * The etcd lease source (REFERENCE §5), wire-compatible with upstream flanneld.
 *
 * <p>Public API: {@link org.jflannel.subnet.etcd.EtcdOptions} (the {@code --etcd-*} flags),
 * {@link org.jflannel.subnet.etcd.EtcdTimings} ({@code defaults(--subnet-lease-renew-margin)}) and
 * {@link org.jflannel.subnet.etcd.EtcdSubnetManager}. Everything else is package-private:
 * key and value codecs ({@code LeaseKeyCodec}, {@code LeaseValueCodec}, {@code GoJson}), the pure
 * {@code SubnetAllocator}, the jetcd wrapper {@code EtcdStore}, {@code LeaseAcquirer},
 * {@code LeaseRenewer}, the watch ({@code LeaseWatch}, {@code LeaseTable}, {@code Expirations}) and
 * {@code OwnLeaseGuard}.
 */
package org.jflannel.subnet.etcd;
