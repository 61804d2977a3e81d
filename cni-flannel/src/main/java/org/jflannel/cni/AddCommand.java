package org.jflannel.cni;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.jflannel.core.CniSubnetEnv;

/**
 * ADD (REFERENCE §11.3): build the delegate config, store it, run the delegate, print its
 * result again. Ours: when the delegate ADD fails, the delegate DEL runs with the same bytes and
 * the scratch file goes, so nothing leaks (containernetworking/plugins#426).
 */
final class AddCommand implements Command {

    @Override
    public void run(Invocation inv) throws CniException {
        FlannelNetConf conf = inv.netConf("failed to load flannel netconf file: failed to load netconf: ");
        CniSubnetEnv subnetEnv = SubnetEnvLoader.load(inv.host, conf.subnetFile(), CniException.INTERNAL);
        Map<String, Object> delegate = DelegateConfig.build(conf, subnetEnv);
        byte[] bytes = GoJsonWriter.compact(delegate);
        inv.stderr.println("delegateAdd: netconf sent to delegate plugin: " + new String(bytes, StandardCharsets.UTF_8));
        Protocol.validateContainerId(inv.containerId); // it becomes a file name
        Invocation.Scratch store = inv.scratch(conf.dataDir());
        store.write(inv.containerId, bytes);
        String type = (String) delegate.get("type");
        byte[] printed;
        try {
            DelegateExec exec = inv.delegates();
            byte[] out = exec.call(type, "ADD", bytes);
            printed = Results.reprint(configVersion(delegate), out);
        } catch (CniException e) {
            rollback(inv, type, bytes);
            store.remove(inv.containerId);
            throw e.wrap("failed to delegate add: ");
        }
        inv.stdout.write(printed, 0, printed.length);
        inv.stdout.flush();
    }

    /** Undo whatever the delegate managed before it failed; its own failure only gets a note. */
    private static void rollback(Invocation inv, String type, byte[] bytes) {
        try {
            DelegateExec exec = inv.delegates();
            exec.call(type, "DEL", bytes);
        } catch (CniException e) {
            inv.stderr.println("delegateAdd: rollback DEL failed: " + e.getMessage());
        }
    }

    /** The delegate config's version as invoke decodes it: "" is 0.1.0. */
    private static String configVersion(Map<String, Object> delegate) throws CniException {
        Object v = delegate.get("cniVersion");
        if (v == null || "".equals(v)) {
            return "0.1.0";
        }
        if (!(v instanceof String s)) {
            throw CniException.internal("decoding version from network config: json: cannot unmarshal "
                + GoDecode.kind(v) + " into Go struct field .cniVersion of type string");
        }
        return s;
    }
}
