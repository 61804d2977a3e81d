package org.jflannel.cni;

import java.util.Map;
import java.util.Optional;

/**
 * CHECK (Ours, REFERENCE §11.6): upstream checks nothing; we ask the delegate to check what ADD
 * created, with the stored config plus the runtime's prevResult. Skel has already refused
 * versions below 0.4.0.
 */
final class CheckCommand implements Command {

    @Override
    public void run(Invocation inv) throws CniException {
        FlannelNetConf conf = inv.netConf("failed to load flannel netconf file: failed to load netconf: ");
        Optional<byte[]> stored = inv.scratch(conf.dataDir()).read(inv.containerId);
        if (stored.isEmpty()) {
            throw new CniException(CniException.UNKNOWN_CONTAINER, "no saved configuration for container " + inv.containerId);
        }
        byte[] bytes = stored.get();
        Map<String, Object> config;
        String type;
        try {
            config = DelCommand.StoredConfig.parse(bytes);
            type = DelCommand.StoredConfig.type(bytes);
        } catch (CniException e) {
            throw e.wrap("failed to parse netconf: ");
        }
        if (conf.prevResult() != null) {
            config.put("prevResult", CheckRoutes.withGateways(conf.prevResult()));
            bytes = GoJsonWriter.compact(config);
        }
        DelegateExec exec = inv.delegates();
        exec.call(type, "CHECK", bytes);
    }
}
