package org.jflannel.testsupport.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SubnetEnvFileTest {
    private static final String ENV = "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.3.1/24\nFLANNEL_MTU=1450\n"
            + "FLANNEL_IPMASQ=true\n";

    @TempDir
    Path dir;

    @Test
    void readsTheVariablesInTheFilesOrderAndTheLeaseFromThem() throws Exception {
        SubnetEnvFile f = new SubnetEnvFile(write(dir.resolve("subnet.env"), ENV));
        assertThat(f.read()).containsExactly(entry("FLANNEL_NETWORK", "10.244.0.0/16"), entry("FLANNEL_SUBNET", "10.244.3.1/24"),
                entry("FLANNEL_MTU", "1450"), entry("FLANNEL_IPMASQ", "true"));
        assertThat(f.lease("node3", InetAddress.getByName("192.0.2.13")))
                .isEqualTo(new NodeLease("node3", "10.244.3.0/24", InetAddress.getByName("192.0.2.13"), 1450));
    }

    @Test
    void aFileWithoutSubnetIsNoLeaseAndTheErrorNamesTheFile() throws Exception {
        Path p = write(dir.resolve("subnet.env"), "FLANNEL_NETWORK=10.244.0.0/16\n");
        assertThatThrownBy(() -> new SubnetEnvFile(p).lease("node1", InetAddress.getByName("192.0.2.11")))
                .isInstanceOf(IOException.class).hasMessageContaining(p.toString()).hasMessageContaining("FLANNEL_SUBNET");
    }

    @Test
    void aFileRenamedIntoPlaceIsWrittenAnewTheOneLeftIsNot() throws Exception {
        Path p = dir.resolve("subnet.env");
        SubnetEnvFile f = new SubnetEnvFile(p);
        assertThat(f.stamp()).as("no file yet").isNull();
        assertThat(f.writtenSince(null)).isFalse();

        write(p, ENV);
        SubnetEnvFile.Stamp first = f.stamp();
        assertThat(f.writtenSince(null)).as("there was none").isTrue();
        assertThat(f.writtenSince(first)).as("the same file").isFalse();

        Path tmp = write(dir.resolve(".subnet.env.tmp"), ENV); // as both daemons write it: same content, a rename
        Files.move(tmp, p, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        assertThat(f.writtenSince(first)).as("renamed into place").isTrue();
    }

    private static Path write(Path p, String content) throws IOException {
        return Files.writeString(p, content);
    }

    private static java.util.Map.Entry<String, String> entry(String k, String v) {
        return java.util.Map.entry(k, v);
    }
}
