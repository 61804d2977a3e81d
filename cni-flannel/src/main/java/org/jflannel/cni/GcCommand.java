package org.jflannel.cni;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.jflannel.core.CniSubnetEnv;

/**
 * GC (Ours, REFERENCE §11.6): scratch files of containers the runtime no longer knows are
 * removed, then GC goes to the delegate with the config ADD would build, so host-local can free
 * leaked addresses. Without subnet.env the files are still collected and the forward is skipped.
 */
final class GcCommand implements Command {

    @Override
    public void run(Invocation inv) throws CniException {
        FlannelNetConf conf = inv.netConf("failed to load flannel netconf file: failed to load netconf: ");
        Invocation.Scratch store = inv.scratch(conf.dataDir());
        if (conf.validAttachments() != null) { // without the list we cannot tell stale from live
            Set<String> valid = new HashSet<>(conf.validAttachments());
            for (String id : store.containerIds()) {
                if (!valid.contains(id)) {
                    store.remove(id);
                }
            }
        }
        CniSubnetEnv subnetEnv;
        try {
            subnetEnv = SubnetEnvLoader.load(inv.host, conf.subnetFile(), CniException.INTERNAL);
        } catch (CniException e) {
            inv.stderr.println("GC: not forwarded to the delegate: " + e.getMessage());
            return;
        }
        Map<String, Object> delegate = DelegateConfig.build(conf, subnetEnv);
        @SuppressWarnings("unchecked")
        Map<String, Object> request = (Map<String, Object>) inv.config;
        for (String key : new String[] {FlannelNetConf.VALID_ATTACHMENTS, "cni.dev/attachments"}) {
            if (request.containsKey(key)) {
                delegate.put(key, request.get(key));
            }
        }
        DelegateExec exec = inv.delegates();
        exec.call((String) delegate.get("type"), "GC", GoJsonWriter.compact(delegate));
    }
}
