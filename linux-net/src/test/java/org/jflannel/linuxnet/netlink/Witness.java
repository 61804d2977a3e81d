package org.jflannel.linuxnet.netlink;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import org.jflannel.linuxnet.Cmd;
import org.jflannel.linuxnet.TestNs;

/** iproute2 inside the test namespace, parsed from its JSON output: the independent witness. */
final class Witness {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final TestNs ns;

    Witness(TestNs ns) {
        this.ns = ns;
    }

    JsonNode json(String... cmd) throws IOException, InterruptedException {
        String out = ns.exec(cmd).strip();
        return JSON.readTree(out.isEmpty() ? "[]" : out);
    }

    JsonNode link(String name) throws IOException, InterruptedException {
        return json("ip", "-d", "-j", "link", "show", "dev", name).get(0);
    }

    /** True when {@code ip link show dev <name>} finds the device. */
    boolean linkExists(String name) throws IOException, InterruptedException {
        return Cmd.tryRun("ip", "-n", ns.name(), "link", "show", "dev", name).exit() == 0;
    }
}
