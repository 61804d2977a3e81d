package org.jflannel.backend.ipsec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import org.jflannel.backend.ipsec.vici.ViciException;
import org.jflannel.backend.ipsec.vici.ViciMessage;
import org.jflannel.core.Backend;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.ConfigException;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.NetConf;
import org.jflannel.core.SubnetManager;
import org.jflannel.linuxnet.netlink.XfrmNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ipsec backend (upstream {@code backend/ipsec}).
 *
 * <p>Design note: the kernel encrypts (ESP in tunnel mode between the nodes' public IPs), strongSwan's
 * charon negotiates the keys (IKEv2, one pre-shared key for the whole cluster). No device: per peer three
 * XFRM policies (our subnet → the peer's out; the peer's → ours in and fwd) send pod traffic into the SA
 * with reqid 11, and one IKE connection in charon, whose child (same reqid, {@code policies = no}: the
 * policies are ours) installs that SA. Both sides start their connection ({@code start_action = start}),
 * so whichever comes first wins and the other's duplicate is resolved by charon. charon runs as our
 * child and is ended on exit; the policies stay.
 */
public final class IpsecBackend implements Backend {
    private static final Logger LOG = LoggerFactory.getLogger(IpsecBackend.class);

    private final ExternalInterface ext;
    private final Executor leaseEvents;
    private final IpsecSettings settings;

    public IpsecBackend(ExternalInterface ext, Executor leaseEvents) {
        this(ext, leaseEvents, IpsecSettings.defaults());
    }

    public IpsecBackend(ExternalInterface ext, Executor leaseEvents, IpsecSettings settings) {
        this.ext = Objects.requireNonNull(ext, "ext");
        this.leaseEvents = Objects.requireNonNull(leaseEvents, "leaseEvents");
        this.settings = Objects.requireNonNull(settings, "settings");
    }

    @Override
    public IpsecNetwork register(NetConf conf, SubnetManager subnets) throws IOException, InterruptedException, ConfigException {
        if (!(conf.backend() instanceof BackendConfig.Ipsec cfg)) {
            throw new ConfigException("Backend.Type", "ipsec backend cannot run Backend.Type " + conf.backend().type());
        }
        if (!conf.enableIPv4() || ext.publicIp() == null) {
            throw new ConfigException("EnableIPv4", "the ipsec backend needs IPv4 and a public IPv4 on " + ext.name());
        }
        // upstream looks for charon after taking the lease (RegisterNetwork: "error creating CharonIKEDaemon struct: No valid
        // charon executable found at paths [...]"); we look first, so a host without charon takes no lease
        List<String> command = settings.command();
        LOG.info("ipsec config udpEncap={} espProposal={}", cfg.udpEncap(), cfg.espProposal());
        // upstream: PublicIP and BackendType "ipsec", no backend data
        Lease lease = subnets.acquireLease(new LeaseAttrs(ext.publicIp(), null, IpsecPlanner.TYPE, null, null));
        Files.createDirectories(settings.stateDir());
        Path run = Path.of("/run"); // charon's view of stateDir in a private run
        Charon charon = Charon.start(new Charon.Settings(command, settings.stateDir().resolve("strongswan.conf"),
                settings.vici(), settings.charonStartTimeout(), settings.charonLog() ? settings.stateDir().resolve("charon.log") : null,
                settings.privateRun() ? run.resolve("strongswan.conf") : null, settings.privateRun() ? run.resolve("charon.vici") : null,
                settings.pidFile()));
        List<AutoCloseable> handles = new ArrayList<>(List.of(charon));
        try {
            checkProposal(charon, cfg.espProposal());
            charon.loadShared(cfg.psk(), List.of(ext.publicIp().getHostAddress())); // upstream: our own key first
            XfrmNetlink xfrm = XfrmNetlink.open();
            handles.add(0, xfrm);
            IpsecPlanner planner = new IpsecPlanner(lease, cfg.espProposal(), cfg.udpEncap());
            int mtu = IpsecPlanner.mtu(ext.mtu(), cfg.udpEncap());
            IpsecNetwork network = new IpsecNetwork(lease, mtu, new IpsecKernel(planner, xfrm, charon, cfg.psk()),
                    charon, () -> closeAll(handles));
            network.startHealing(leaseEvents, settings.timing());
            LOG.info("ipsec network registered lease={} mtu={} charonPid={}", lease.key(), mtu, charon.pid());
            return network;
        } catch (IOException | ConfigException | RuntimeException e) {
            closeAll(handles);
            throw e;
        }
    }

    /**
     * Ours: upstream hands the ESP proposal to charon with every peer's connection, where a bad one fails
     * each peer (logged) while the daemon runs on. We ask charon once, at start, with a probe connection.
     */
    static void checkProposal(Charon charon, String esp) throws IOException, ConfigException {
        String name = "jflannel-esp-probe";
        ViciMessage probe = ViciMessage.builder().put("version", "2")
                .put("children", ViciMessage.builder().put(name, ViciMessage.builder()
                        .put("esp_proposals", List.of(esp)).put("start_action", "none").build()).build())
                .build();
        try {
            charon.vici(v -> {
                v.loadConn(name, probe);
                v.unloadConn(name);
                return null;
            });
        } catch (ViciException e) {
            throw new ConfigException("Backend.ESPProposal", "charon refuses \"" + esp + "\": " + e.getMessage());
        }
    }

    private static void closeAll(List<AutoCloseable> handles) {
        for (AutoCloseable h : handles) {
            try {
                h.close();
            } catch (Exception e) {
                LOG.warn("ipsec close failed handle={} error={}", h.getClass().getSimpleName(), e.toString());
            }
        }
    }
}
