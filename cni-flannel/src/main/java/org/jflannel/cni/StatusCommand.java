package org.jflannel.cni;

/**
 * STATUS (Ours, REFERENCE §11.6): the plugin can attach pods only once flanneld has written
 * subnet.env, so a missing, unreadable or incomplete file is code 50 (not available).
 */
final class StatusCommand implements Command {

    @Override
    public void run(Invocation inv) throws CniException {
        FlannelNetConf conf = inv.netConf("failed to load flannel netconf file: failed to load netconf: ");
        try {
            SubnetEnvLoader.load(inv.host, conf.subnetFile(), CniException.NOT_AVAILABLE);
        } catch (CniException e) {
            throw new CniException(CniException.NOT_AVAILABLE, e.msg());
        }
    }
}
