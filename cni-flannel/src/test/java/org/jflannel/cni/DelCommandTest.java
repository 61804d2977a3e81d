package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** DEL (REFERENCE §11.6): stored bytes verbatim, tolerant of anything gone; Ours: file kept when the delegate fails. */
class DelCommandTest {

    private static final String STORED = "{\"cniVersion\":\"0.3.1\",\"name\":\"cbr0\",\"type\":\"bridge\",\"x\":1.50}";

    @TempDir
    Path dir;
    PluginHarness h;

    @BeforeEach
    void setUp() throws Exception {
        h = new PluginHarness(dir); // no subnet.env: DEL must not need it
        h.env.remove("CNI_NETNS");
    }

    private void store(String content) throws Exception {
        Files.createDirectories(h.dataDir);
        Files.writeString(h.scratch(), content);
    }

    @Test
    void delegateGetsTheStoredBytesVerbatimAndTheFileGoes() throws Exception {
        store(STORED);
        PluginHarness.Outcome o = h.run("DEL", h.config("\"cniVersion\":\"0.3.1\",\"runtimeConfig\":{\"ignored\":true}"));
        assertThat(o.exit()).as(o.stdout()).isZero();
        assertThat(o.stdout()).isEmpty();
        assertThat(h.calls()).containsExactly(new PluginHarness.Call("DEL", STORED, true));
        assertThat(h.scratch()).doesNotExist();
    }

    @Test
    void noScratchFileIsSuccessWithoutDelegateCall() throws Exception {
        PluginHarness.Outcome o = h.run("DEL", h.config(""));
        assertThat(o.exit()).isZero();
        assertThat(h.calls()).isEmpty();
        assertThat(h.run("DEL", h.config("\"dataDir\":\"\"")).exit()).isZero(); // relative to the cwd: nothing there either
    }

    @Test
    void delegateTypeComesFromTheFile() throws Exception {
        h.installFake("ptp");
        store("{\"type\":\"ptp\"}");
        assertThat(h.run("DEL", h.config("\"delegate\":{\"type\":\"bridge\"}")).exit()).isZero();
        assertThat(h.calls()).hasSize(1);
        assertThat(h.scratch()).doesNotExist();
    }

    @Test
    void unparsableFileIsReportedOnStderrAndKept() throws Exception {
        store("");
        PluginHarness.Outcome o = h.run("DEL", h.config(""));
        assertThat(o.exit()).isZero();
        assertThat(o.stderr()).isEqualTo("failed to parse netconf: unexpected end of JSON input");
        assertThat(h.calls()).isEmpty();
        assertThat(h.scratch()).exists();
        store("{\"type\":7}");
        assertThat(h.run("DEL", h.config("")).stderr())
            .isEqualTo("failed to parse netconf: json: cannot unmarshal number into Go struct field NetConf.type of type string");
    }

    @Test
    void failingDelegateKeepsTheFileSoTheRetryReachesItAgain() throws Exception {
        store(STORED);
        h.fail("DEL", 1, "{\"code\":11,\"msg\":\"busy\"}", null);
        assertThat(h.run("DEL", h.config("\"cniVersion\":\"0.3.1\"")).stdout()).isEqualTo(PluginHarness.error("0.3.1", 11, "busy", ""));
        assertThat(h.scratch()).exists();
        Files.delete(dir.resolve("exit.DEL"));
        Files.delete(dir.resolve("reply.DEL"));
        assertThat(h.run("DEL", h.config("\"cniVersion\":\"0.3.1\"")).exit()).isZero();
        assertThat(h.calls()).extracting(PluginHarness.Call::command).containsExactly("DEL", "DEL");
        assertThat(h.scratch()).doesNotExist();
    }

    @Test
    void missingDelegateBinaryIsAnErrorAndKeepsTheFile() throws Exception {
        store("{\"type\":\"gone\"}");
        assertThat(h.run("DEL", h.config("")).stdout()).isEqualTo(PluginHarness.error("1.1.0", 999,
            "failed to find plugin \"gone\" in path [" + h.bin + "]", ""));
        assertThat(h.scratch()).exists();
    }

    @Test
    void unreadableScratchFileIsAnError() throws Exception {
        Files.createDirectories(h.scratch());
        assertThat(h.run("DEL", h.config("")).stdout())
            .isEqualTo(PluginHarness.error("1.1.0", 999, "read " + h.scratch() + ": is a directory", ""));
    }

    @Test
    void badConfigUsesDelsShorterPrefix() {
        assertThat(h.run("DEL", h.config("\"delegate\":[]")).stdout()).isEqualTo(PluginHarness.error("1.1.0", 999,
            "failed to load netconf: json: cannot unmarshal array into Go struct field NetConf.delegate of type map[string]interface {}", ""));
    }

    @Test
    void addThenDelThenDelAgain() throws Exception {
        h.subnetEnv(PluginHarness.V4_ENV).reply("ADD", "{\"cniVersion\":\"0.3.1\"}");
        h.env.put("CNI_NETNS", "/run/netns/x");
        assertThat(h.run("ADD", h.config("")).exit()).isZero();
        h.env.put("CNI_NETNS", "");
        assertThat(h.run("DEL", h.config("")).exit()).isZero();
        assertThat(h.run("DEL", h.config("")).exit()).isZero();
        assertThat(h.calls()).extracting(PluginHarness.Call::command).containsExactly("ADD", "DEL");
        assertThat(h.calls().get(1).stdin()).isEqualTo(h.calls().get(0).stdin());
    }
}
