package org.jflannel.cni;

import org.jflannel.core.CniSubnetEnv;
import org.jflannel.core.ConfigException;

/** subnet.env for ADD, GC and STATUS, with upstream's message around the parser's (REFERENCE §11.3 step 3). */
final class SubnetEnvLoader {

    private SubnetEnvLoader() {
    }

    /** Code 7 for a line without '=' (Ours), {@code failureCode} for everything else. */
    static CniSubnetEnv load(Host host, String path, long failureCode) throws CniException {
        try {
            return host.readSubnetEnv(path);
        } catch (ConfigException e) {
            String msg = "failed to load flannel 'subnet.env' file: " + e.getMessage() + ". Check the flannel pod log for this node.";
            if (e instanceof CniSubnetEnv.MissingEqualsException) {
                throw new CniException(CniException.INVALID_CONFIG, msg);
            }
            throw failureCode == CniException.INTERNAL ? CniException.internal(msg) : new CniException(failureCode, msg);
        }
    }
}
