package org.jflannel.core;

import java.nio.file.Path;

/** Writes a subnet.env from a separate JVM, so that a test can run it under a restrictive umask. */
public final class SubnetEnvWriteMain {

    private SubnetEnvWriteMain() {
    }

    public static void main(String[] args) throws Exception {
        new SubnetEnv(Ip4Net.parse("10.244.0.0/16"), Ip4Net.parse("10.244.1.0/24"), null, null, 1450, true)
                .write(Path.of(args[0]));
    }
}
