package org.jflannel.backend.wireguard;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Kernel mode against a real kernel WireGuard, which this project's machines lack: boots Debian 12's
 * kernel under qemu ({@code tools/kernel-vm/run.sh}, the host's filesystem read-only at the same paths)
 * and runs {@link KernelModeInVm} there on this test's own JVM and class path. The harness fetches the
 * kernel package from Debian's mirror on its first run (cached in /var/cache/jflannel/kernel-vm).
 */
@Tag("netns")
class KernelModeVmIT {

    @Test
    void kernelModeRunsAgainstDebiansKernelWireguard() throws Exception {
        Path harness = Path.of(System.getProperty("user.dir")).resolveSibling("tools").resolve("kernel-vm").resolve("run.sh");
        assertThat(harness).as("the kernel VM harness").isRegularFile();
        List<String> cmd = new ArrayList<>(List.of(harness.toString(), "--timeout", "900", "--module", "tun", "--",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), VmTestMain.class.getName(), KernelModeInVm.class.getName()));
        Path log = Files.createTempFile("kernel-vm", ".log");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            boolean ended = p.waitFor(1000, TimeUnit.SECONDS);
            if (!ended) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
            String out = Files.readString(log, StandardCharsets.UTF_8);
            System.out.println(out);
            assertThat(ended).as("the VM run ended within its bound").isTrue();
            assertThat(out).as("every test in the VM passed").contains("vm tests: found=2 succeeded=2 failed=0");
            assertThat(p.exitValue()).isZero();
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
