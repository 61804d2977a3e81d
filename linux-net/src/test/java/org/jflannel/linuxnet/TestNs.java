package org.jflannel.linuxnet;

import java.io.IOException;
import java.util.concurrent.ThreadLocalRandom;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testbase.NetnsPrivilege;

/**
 * A throwaway namespace for linux-net's own integration tests (test-support has the public
 * extension, but linux-net cannot depend on it). Unique name, deleted in {@link #close()}.
 */
public final class TestNs implements AutoCloseable {
    public final NetNs ns;

    private TestNs(NetNs ns) {
        this.ns = ns;
    }

    public static TestNs create(String prefix) throws IOException {
        NetnsPrivilege.require();
        String name = prefix + "-" + Long.toString(ThreadLocalRandom.current().nextLong(1L << 40), 36);
        return new TestNs(NetNs.create(name));
    }

    public String name() {
        return ns.name();
    }

    /** Runs {@code ip} (or bridge, ping) inside the namespace as an independent witness. */
    public String exec(String... cmd) throws IOException, InterruptedException {
        return Cmd.run(prepend(cmd));
    }

    private String[] prepend(String... cmd) {
        String[] all = new String[cmd.length + 4];
        all[0] = "ip";
        all[1] = "netns";
        all[2] = "exec";
        all[3] = ns.name();
        System.arraycopy(cmd, 0, all, 4, cmd.length);
        return all;
    }

    @Override
    public void close() throws IOException {
        ns.delete();
    }
}
