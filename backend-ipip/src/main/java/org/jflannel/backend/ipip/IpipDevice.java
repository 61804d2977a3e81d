package org.jflannel.backend.ipip;

import java.io.IOException;
import java.net.Inet4Address;
import java.util.Optional;
import java.util.function.Predicate;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.Address;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns {@code flannel.ipip}: creates or adopts it (upstream's {@code configureIPIPDevice}), sets its MTU,
 * gives it the lease's /32, brings it up, and creates it again when it vanishes. Lease-events thread only.
 */
final class IpipDevice {
    private static final Logger LOG = LoggerFactory.getLogger(IpipDevice.class);
    private static final int EEXIST = 17;

    private final RtNetlink nl;
    private final Inet4Address local;
    private final int mtu;
    private final IpPrefix address;
    private final Predicate<IpPrefix> insideNetwork;
    private int index;

    private IpipDevice(RtNetlink nl, Inet4Address local, int mtu, IpPrefix address, Predicate<IpPrefix> insideNetwork) {
        this.nl = nl;
        this.local = local;
        this.mtu = mtu;
        this.address = address;
        this.insideNetwork = insideNetwork;
    }

    /**
     * @param local          the external interface's own IPv4 address (upstream's {@code IfaceAddr})
     * @param address        the lease subnet's network address as /32
     * @param insideNetwork  other IPv4 addresses on the device inside the flannel Network are removed
     * @throws IOException   {@link DeviceCheck#NOT_IPIP}, or {@link KernelFeature#message} when the kernel has no ipip
     */
    static IpipDevice ensure(RtNetlink nl, Inet4Address local, int mtu, IpPrefix address, Predicate<IpPrefix> insideNetwork)
            throws IOException {
        IpipDevice d = new IpipDevice(nl, local, mtu, address, insideNetwork);
        d.createOrAdopt();
        d.configure();
        return d;
    }

    private void createOrAdopt() throws IOException {
        try {
            create();
            LOG.info("ipip device created name={} local={} remote=any mtu={}", DeviceCheck.NAME, local.getHostAddress(), mtu);
            return;
        } catch (NetlinkException e) {
            if (e.errno() != EEXIST) {
                throw e;
            }
        }
        Link existing = nl.link(DeviceCheck.NAME).orElseThrow(() -> new IOException(DeviceCheck.NAME + " exists but cannot be read"));
        if (!DeviceCheck.isIpip(existing)) {
            throw new IOException(DeviceCheck.NOT_IPIP);
        }
        Optional<String> why = DeviceCheck.incompatibility(existing, local);
        if (why.isPresent()) {
            LOG.warn("\"{}\" already exists with incompatible attributes: {}; recreating device", DeviceCheck.NAME, why.get());
            nl.deleteLink(existing.index());
            create();
            LOG.info("ipip device created name={} local={} remote=any mtu={}", DeviceCheck.NAME, local.getHostAddress(), mtu);
        } else {
            LOG.info("ipip device adopted name={} index={} local={}", DeviceCheck.NAME, existing.index(), local.getHostAddress());
        }
    }

    private void create() throws NetlinkException {
        try {
            nl.createIpip(DeviceCheck.NAME, local);
        } catch (NetlinkException e) {
            if (KernelFeature.missing(e)) {
                throw new NetlinkException(e.operation(), DeviceCheck.NAME + " type ipip", e.errno(), KernelFeature.message(e));
            }
            throw e;
        }
    }

    /** MTU (external − 20), the /32 (other addresses inside the Network removed), up. */
    private void configure() throws IOException {
        Link link = nl.link(DeviceCheck.NAME).orElseThrow(() -> new IOException("can't locate created ipip device " + DeviceCheck.NAME));
        index = link.index();
        if (link.mtu() != mtu) {
            nl.setMtu(index, mtu);
            LOG.info("ipip device mtu set name={} from={} to={}", DeviceCheck.NAME, link.mtu(), mtu);
        }
        boolean have = false;
        for (Address a : nl.addresses(index)) {
            IpPrefix p = a.prefix();
            if (!p.isIpv4()) {
                continue;
            }
            if (p.equals(address)) {
                have = true;
            } else if (insideNetwork.test(p)) {
                nl.deleteAddress(index, p);
                LOG.info("ipip device address removed name={} address={}", DeviceCheck.NAME, p);
            }
        }
        if (!have) {
            nl.addAddress(index, address);
            LOG.info("ipip device addressed name={} address={}", DeviceCheck.NAME, address);
        }
        if (!link.up()) {
            nl.setUp(index);
        }
    }

    /** Whether the device we made is still there under its index; false means {@link #recreate}. */
    boolean healthy() throws NetlinkException {
        Optional<Link> link = nl.link(DeviceCheck.NAME);
        return link.isPresent() && link.get().index() == index;
    }

    /** Creates the vanished (or replaced) device again: a non-ipip device in its place is refused as at start. */
    void recreate() throws IOException {
        createOrAdopt();
        configure();
        LOG.info("ipip device recreated name={} index={}", DeviceCheck.NAME, index);
    }

    /** Brings back MTU, address and up state if they were changed (device itself present); how many parts. */
    int repairState() throws IOException {
        int repairs = 0;
        Link link = nl.link(index).orElseThrow(() -> new IOException(DeviceCheck.NAME + " is gone"));
        if (link.mtu() != mtu) {
            nl.setMtu(index, mtu);
            LOG.info("ipip device mtu repaired name={} from={} to={}", DeviceCheck.NAME, link.mtu(), mtu);
            repairs++;
        }
        if (nl.addresses(index).stream().noneMatch(a -> a.prefix().equals(address))) {
            nl.addAddress(index, address);
            LOG.info("ipip device address repaired name={} address={}", DeviceCheck.NAME, address);
            repairs++;
        }
        if (!link.up()) {
            nl.setUp(index);
            LOG.info("ipip device set up again name={}", DeviceCheck.NAME);
            repairs++;
        }
        return repairs;
    }

    int index() {
        return index;
    }

    int mtu() {
        return mtu;
    }
}
