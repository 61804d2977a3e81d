package org.jflannel.backend.extension;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Map;
import java.util.Objects;
import org.jflannel.core.Backend;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.ConfigException;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.NetConf;
import org.jflannel.core.SubnetManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * upstream's {@code extension} backend (REFERENCE §15): the data plane is the operator's own
 * commands. Design note: we run them exactly as upstream does ({@link GoCommand}, {@link
 * CommandRunner}) so that a cluster's existing extension scripts work unchanged on our nodes:
 * <ol>
 *   <li>{@code PreStartupCommand} before the lease; its trimmed output, as a JSON string, is the
 *       lease's backend data (how a node tells its peers e.g. its tunnel address). A failure is fatal.</li>
 *   <li>the lease, with {@code BackendType} {@code extension};</li>
 *   <li>{@code PostStartupCommand} with {@code NETWORK}, {@code SUBNET} (ours) and {@code PUBLIC_IP}.
 *       A failure is fatal.</li>
 *   <li>per peer lease ({@link ExtensionNetwork}) {@code SubnetAddCommand} / {@code SubnetRemoveCommand}.</li>
 * </ol>
 * This process starts the commands: it is the one place of the daemon besides the rule tools that
 * execs, because running the operator's program is this backend's whole job.
 */
public final class ExtensionBackend implements Backend {
    private static final Logger LOG = LoggerFactory.getLogger(ExtensionBackend.class);
    static final String TYPE = "extension";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ExternalInterface ext;
    private final CommandRunner runner;

    public ExtensionBackend(ExternalInterface ext) {
        this(ext, CommandRunner.fromProcessEnvironment());
    }

    ExtensionBackend(ExternalInterface ext, CommandRunner runner) {
        this.ext = Objects.requireNonNull(ext, "ext");
        this.runner = Objects.requireNonNull(runner, "runner");
    }

    @Override
    public ExtensionNetwork register(NetConf conf, SubnetManager subnets)
            throws IOException, InterruptedException, ConfigException {
        if (!(conf.backend() instanceof BackendConfig.Extension cfg)) {
            throw new ConfigException("Backend.Type", "extension backend cannot run Backend.Type " + conf.backend().type());
        }
        if (ext.publicIp() == null) {
            throw new ConfigException("EnableIPv4", "interface " + ext.name() + " has no IPv4 address");
        }
        String data = null;
        if (configured(cfg.preStartupCommand())) {
            CommandRunner.Result r = runner.run(cfg.preStartupCommand(), Map.of(), "");
            if (!r.ok()) {
                throw new IOException("failed to run command: " + cfg.preStartupCommand() + " Err: " + exit(r) + " Output: " + r.output());
            }
            LOG.info("extension command ran phase=pre-startup command=\"{}\" output=\"{}\"", cfg.preStartupCommand(), r.output());
            data = JSON.writeValueAsString(r.output());
        } else {
            LOG.info("extension command skipped phase=pre-startup reason=not-configured");
        }
        Lease lease = subnets.acquireLease(new LeaseAttrs(ext.publicIp(), null, TYPE, data, null));
        if (configured(cfg.postStartupCommand())) {
            Map<String, String> vars = Map.of("NETWORK", String.valueOf(conf.network()), "SUBNET", String.valueOf(lease.subnet()),
                    "PUBLIC_IP", ext.publicIp().getHostAddress());
            CommandRunner.Result r = runner.run(cfg.postStartupCommand(), vars, "");
            if (!r.ok()) {
                throw new IOException("failed to run command: " + cfg.postStartupCommand() + " Err: " + exit(r) + " Output: " + r.output());
            }
            LOG.info("extension command ran phase=post-startup command=\"{}\" output=\"{}\"", cfg.postStartupCommand(), r.output());
        } else {
            LOG.info("extension command skipped phase=post-startup reason=not-configured");
        }
        LOG.info("extension network registered lease={} mtu={}", lease.key(), ext.mtu());
        return new ExtensionNetwork(lease, ext.mtu(), cfg, runner);
    }

    /** Upstream runs a command when its string is non-empty; one of only white space has no field to run. */
    static boolean configured(String command) {
        return command != null && !command.isEmpty();
    }

    static String exit(CommandRunner.Result r) {
        return r.exitCode() >= 0 ? "exit status " + r.exitCode() : "not run";
    }

    /** Go's json.Unmarshal of a lease's BackendData into a string; null when it is not a JSON string. */
    static String decodeData(String raw) {
        if (raw == null || raw.isEmpty()) {
            return "";
        }
        try {
            var node = JSON.readTree(raw);
            return node != null && node.isTextual() ? node.textValue() : null;
        } catch (JsonProcessingException e) {
            return null;
        }
    }
}
