package org.jflannel.cni;

import java.util.Map;

/** The executable: {@code /opt/cni/bin/flannel}. All work happens in {@link FlannelPlugin}. */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        Map<String, String> env = System.getenv();
        LoggerWarmup.startFor(env.getOrDefault("CNI_COMMAND", ""));
        int status = new FlannelPlugin(env, System.in, System.out, System.err).run();
        System.out.flush();
        System.err.flush();
        // halt, not exit: the plugin registers no shutdown hook, and since JDK 21 exit looks up the system
        // logger "java.lang.Runtime" (for VERSION, STATUS: the whole backend lookup LoggerWarmup describes)
        Runtime.getRuntime().halt(status);
    }
}
