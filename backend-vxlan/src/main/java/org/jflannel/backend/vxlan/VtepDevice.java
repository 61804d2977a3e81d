package org.jflannel.backend.vxlan;

import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.Optional;
import java.util.function.Predicate;
import org.jflannel.core.MacAddress;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.Address;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.linuxnet.netlink.VxlanSpec;
import org.jflannel.linuxnet.sys.Sysctl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns one VTEP, {@code flannel.<VNI>} or {@code flannel-v6.<VNI>}: creates or adopts it (REFERENCE
 * §6.1, §6.4), addresses it (§6.2 step 4), brings it up and creates it again when it vanishes.
 * Its MAC is fixed once chosen: peers reach us through the MAC our lease publishes.
 */
final class VtepDevice {
    private static final Logger LOG = LoggerFactory.getLogger(VtepDevice.class);
    private static final int EEXIST = 17;

    private final RtNetlink nl;
    private final String underlay;
    private VxlanSpec spec;
    private int index;
    private IpPrefix address;
    private Predicate<InetAddress> insideNetwork = a -> false;

    private VtepDevice(RtNetlink nl, VxlanSpec spec, String underlay) {
        this.nl = nl;
        this.spec = spec;
        this.underlay = underlay;
    }

    /**
     * Creates the device, or adopts a compatible one (keeping its MAC), or replaces an incompatible one.
     *
     * @param underlay the external interface's name, looked up again if it is re-created under a new index
     */
    static VtepDevice ensure(RtNetlink nl, VxlanSpec spec, String underlay) throws IOException {
        VtepDevice dev = new VtepDevice(nl, spec, underlay);
        dev.ensure();
        return dev;
    }

    private void ensure() throws IOException {
        try {
            nl.createVxlan(spec);
            LOG.info("vxlan device created name={} vni={} mtu={} mac={}", spec.name(), spec.vni(), spec.mtu(), spec.mac());
        } catch (NetlinkException e) {
            if (e.errno() != EEXIST) {
                throw e;
            }
            adoptOrReplace();
        }
        Link link = nl.link(spec.name()).orElseThrow(() -> new IOException("can't locate created vxlan device " + spec.name()));
        index = link.index();
        if (spec.mac() == null) {
            spec = withMac(spec, link.mac());
        }
        disableAcceptRa();
    }

    private void adoptOrReplace() throws IOException {
        Link existing = nl.link(spec.name()).orElseThrow(() -> new IOException(spec.name() + " exists but cannot be read"));
        DeviceCheck check = DeviceCheck.compare(spec, existing);
        if (!check.adoptable()) {
            LOG.warn("\"{}\" already exists with incompatible configuration: {}; recreating device", spec.name(), check.incompatibility());
            nl.deleteLink(existing.index());
            nl.createVxlan(spec);
            return;
        }
        if (check.mtuDiffers()) {
            try {
                nl.setMtu(existing.index(), spec.mtu());
                LOG.info("vxlan device mtu corrected name={} from={} to={}", spec.name(), existing.mtu(), spec.mtu());
            } catch (NetlinkException e) {
                // the kernel caps a VTEP's MTU at underlay − 50 (IPv4) or − 70 (IPv6) and clamps at creation
                // too, so a device it made at the cap is as good as we can get
                LOG.warn("vxlan device mtu kept name={} have={} want={} error={}", spec.name(), existing.mtu(), spec.mtu(), e.getMessage());
            }
        }
        if (check.learningDiffers()) {
            try {
                nl.setVxlanLearning(existing.index(), spec.learning());
                LOG.info("vxlan device learning corrected name={} to={}", spec.name(), spec.learning());
            } catch (NetlinkException e) {
                LOG.warn("vxlan device learning not changeable name={} error={}; recreating device", spec.name(), e.getMessage());
                nl.deleteLink(existing.index());
                nl.createVxlan(spec);
                return;
            }
        }
        spec = withMac(spec, existing.mac()); // a compatible device keeps its MAC (REFERENCE §6.3)
        LOG.info("vxlan device adopted name={} mac={}", spec.name(), existing.mac());
    }

    private void disableAcceptRa() {
        try {
            Sysctl.write("net/ipv6/conf/" + spec.name() + "/accept_ra", "0");
        } catch (IOException | RuntimeException e) {
            LOG.debug("accept_ra not set name={} error={}", spec.name(), e.getMessage()); // upstream ignores it too
        }
    }

    /**
     * Ensures {@code want} on the device and brings it up. IPv4: other addresses inside the flannel
     * network go. IPv6: other non-link-local addresses go until the wanted one is met (upstream).
     */
    void configure(IpPrefix want, Predicate<InetAddress> insideFlannelNetwork) throws IOException {
        this.address = want;
        this.insideNetwork = insideFlannelNetwork;
        boolean have = want.isIpv4() ? cleanV4() : cleanV6();
        if (!have) {
            nl.addAddress(index, want);
            LOG.info("vxlan device addressed name={} address={}", spec.name(), want);
        }
        nl.setUp(index);
    }

    private boolean cleanV4() throws IOException {
        boolean have = false;
        for (Address a : nl.addresses(index)) {
            IpPrefix p = a.prefix();
            if (!p.isIpv4()) {
                continue;
            }
            if (p.equals(address)) {
                have = true;
            } else if (insideNetwork.test(p.address())) {
                nl.deleteAddress(index, p);
                LOG.info("vxlan device address removed name={} address={}", spec.name(), p);
            }
        }
        return have;
    }

    private boolean cleanV6() throws IOException {
        for (Address a : nl.addresses(index)) {
            IpPrefix p = a.prefix();
            if (!p.isIpv6() || ((Inet6Address) p.address()).isLinkLocalAddress()) {
                continue;
            }
            if (p.equals(address)) {
                return true;
            }
            nl.deleteAddress(index, p);
            LOG.info("vxlan device address removed name={} address={}", spec.name(), p);
        }
        return false;
    }

    /** Issue #1795: the MAC must stay the one we publish; something (udev, a user) may have changed it. */
    void checkMac(MacAddress published) throws IOException {
        Optional<Link> link = nl.link(index);
        if (link.isPresent() && !published.equals(link.get().mac())) {
            LOG.warn("vxlan device mac differs name={} have={} published={}; restoring", spec.name(), link.get().mac(), published);
            nl.setMac(index, published);
        }
    }

    /** Creates the vanished device again with the same spec and MAC, addresses it and brings it up. */
    void recreate() throws IOException {
        nl.deleteLink(spec.name()); // a half-made leftover of an earlier attempt
        int under = nl.link(underlay).map(Link::index)
                .orElseThrow(() -> new IOException("external interface " + underlay + " is gone"));
        if (under != spec.underlayIndex()) {
            LOG.info("external interface has a new index name={} index={}", underlay, under);
            spec = new VxlanSpec(spec.name(), spec.vni(), under, spec.local(), spec.port(), spec.learning(), spec.gbp(),
                    spec.mtu(), spec.mac());
        }
        nl.createVxlan(spec);
        index = nl.link(spec.name()).orElseThrow(() -> new IOException("can't locate created vxlan device " + spec.name())).index();
        disableAcceptRa();
        if (address != null) {
            configure(address, insideNetwork);
        }
        LOG.info("vxlan device recreated name={} index={} mac={}", spec.name(), index, spec.mac());
    }

    /** Whether the device is present, up and addressed; false means it needs {@link #recreate}. */
    boolean healthy() throws IOException {
        Optional<Link> link = nl.link(spec.name());
        return link.isPresent() && link.get().index() == index;
    }

    /** Brings back the address and up state if they were taken away (device itself present). */
    int repairState() throws IOException {
        int repairs = 0;
        Link link = nl.link(index).orElseThrow(() -> new IOException(spec.name() + " is gone"));
        if (address != null && nl.addresses(index).stream().noneMatch(a -> a.prefix().equals(address))) {
            nl.addAddress(index, address);
            repairs++;
        }
        if (!link.up()) {
            nl.setUp(index);
            repairs++;
        }
        return repairs;
    }

    String name() {
        return spec.name();
    }

    int index() {
        return index;
    }

    MacAddress mac() {
        return spec.mac();
    }

    int mtu() {
        return spec.mtu();
    }

    private static VxlanSpec withMac(VxlanSpec s, MacAddress mac) {
        return new VxlanSpec(s.name(), s.vni(), s.underlayIndex(), s.local(), s.port(), s.learning(), s.gbp(), s.mtu(),
                mac == null ? s.mac() : mac);
    }
}
