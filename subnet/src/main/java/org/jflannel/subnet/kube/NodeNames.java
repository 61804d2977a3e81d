package org.jflannel.subnet.kube;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.jflannel.core.ConfigException;

import java.io.IOException;

/** Finds our node's name (REFERENCE §4.1): NODE_NAME, else the {@code spec.nodeName} of our own pod. */
public final class NodeNames {

    private NodeNames() {
    }

    /** As {@link #resolve(KubernetesClient, KubeEnv)} from the process's variables (NODE_NAME, POD_NAME, POD_NAMESPACE). */
    public static String resolve(KubernetesClient client, java.util.Map<String, String> env) throws ConfigException, IOException {
        return resolve(client, KubeEnv.from(env));
    }

    static String resolve(KubernetesClient client, KubeEnv env) throws ConfigException, IOException {
        if (!env.nodeName().isEmpty()) {
            return env.nodeName();
        }
        if (env.podName().isEmpty() || env.podNamespace().isEmpty()) {
            throw new ConfigException("POD_NAME", "env variables POD_NAME and POD_NAMESPACE must be set");
        }
        String where = env.podNamespace() + "/" + env.podName();
        Pod pod;
        try {
            pod = client.pods().inNamespace(env.podNamespace()).withName(env.podName()).get();
        } catch (KubernetesClientException e) {
            throw new IOException("error retrieving pod spec for '" + where + "': " + e.getMessage(), e);
        }
        if (pod == null) {
            throw new IOException("error retrieving pod spec for '" + where + "': pods \"" + env.podName() + "\" not found");
        }
        String node = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
        if (node == null || node.isEmpty()) {
            throw new ConfigException("spec.nodeName", "node name not present in pod spec '" + where + "'");
        }
        return node;
    }
}
