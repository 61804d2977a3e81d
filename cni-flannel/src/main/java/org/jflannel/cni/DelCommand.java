package org.jflannel.cni;

import java.util.Map;
import java.util.Optional;

/**
 * DEL (REFERENCE §11.6): the delegate DEL gets the stored bytes verbatim; subnet.env is not
 * needed. Tolerant of anything already gone. Ours: when the delegate DEL fails the scratch file
 * is kept, so the runtime's retry reaches the delegate again instead of leaking its state.
 */
final class DelCommand implements Command {

    @Override
    public void run(Invocation inv) throws CniException {
        FlannelNetConf conf = inv.netConf("failed to load netconf: ");
        Invocation.Scratch store = inv.scratch(conf.dataDir());
        Optional<byte[]> stored = store.read(inv.containerId);
        if (stored.isEmpty()) {
            return; // already deleted
        }
        byte[] bytes = stored.get();
        String type;
        try {
            type = StoredConfig.type(bytes);
        } catch (CniException e) {
            // the interface stays on the bridge until reboot; failing would block the pod's removal forever
            inv.stderr.print("failed to parse netconf: " + e.getMessage());
            inv.stderr.flush();
            return;
        }
        DelegateExec exec = inv.delegates();
        exec.call(type, "DEL", bytes);
        store.remove(inv.containerId);
    }

    /** A stored delegate config, decoded as types.NetConf is. */
    static final class StoredConfig {
        private StoredConfig() {
        }

        @SuppressWarnings("unchecked")
        static Map<String, Object> parse(byte[] bytes) throws CniException {
            Object tree;
            try {
                tree = GoJson.parse(bytes);
            } catch (GoJson.SyntaxException e) {
                throw CniException.internal(e.getMessage());
            }
            if (tree != null && !(tree instanceof Map)) {
                throw CniException.internal("json: cannot unmarshal " + GoDecode.kind(tree) + " into Go value of type types.NetConf");
            }
            return tree == null ? new java.util.LinkedHashMap<>() : (Map<String, Object>) tree;
        }

        static String type(byte[] bytes) throws CniException {
            Map<String, Object> m = parse(bytes);
            GoDecode d = new GoDecode("NetConf");
            d.string(m, "cniVersion", "");
            d.string(m, "name", "");
            String type = d.string(m, "type", "");
            if (d.error() != null) {
                throw CniException.internal(d.error());
            }
            return type;
        }
    }
}
