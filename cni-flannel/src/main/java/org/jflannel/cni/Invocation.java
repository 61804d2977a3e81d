package org.jflannel.cni;

import java.io.PrintStream;
import java.util.Map;

/**
 * One run of the plugin as a command sees it (skel's CmdArgs): the checked CNI_* variables,
 * stdin as bytes and as parsed JSON, and the streams. Everything is injected; nothing global.
 */
final class Invocation {
    final Map<String, String> env;
    final String containerId;
    final String netns;
    final String ifName;
    final byte[] stdin;
    final Object config;
    final PrintStream stdout;
    final PrintStream stderr;
    final Host host;

    Invocation(Map<String, String> env, byte[] stdin, Object config, PrintStream stdout, PrintStream stderr, Host host) {
        this.host = host;
        this.env = env;
        this.containerId = env.getOrDefault("CNI_CONTAINERID", "");
        this.netns = env.getOrDefault("CNI_NETNS", "");
        this.ifName = env.getOrDefault("CNI_IFNAME", "");
        this.stdin = stdin;
        this.config = config;
        this.stdout = stdout;
        this.stderr = stderr;
    }

    /** stdin decoded as upstream's NetConf; decode errors get {@code prefix}. */
    FlannelNetConf netConf(String prefix) throws CniException {
        try {
            return FlannelNetConf.decode(stdin);
        } catch (CniException e) {
            throw e.wrap(prefix);
        }
    }

    DelegateExec delegates() {
        return new DelegateExec(env, stderr, host);
    }

    /** The scratch files of {@code dataDir}, through the host. */
    Scratch scratch(String dataDir) {
        return new Scratch(host, dataDir);
    }

    /** ScratchStore's verbs for one data directory, performed by the host. */
    record Scratch(Host host, String dataDir) {
        void write(String id, byte[] bytes) throws CniException {
            host.writeScratch(dataDir, id, bytes);
        }

        java.util.Optional<byte[]> read(String id) throws CniException {
            return host.readScratch(dataDir, id);
        }

        void remove(String id) {
            host.removeScratch(dataDir, id);
        }

        java.util.List<String> containerIds() throws CniException {
            return host.scratchIds(dataDir);
        }
    }
}
