package org.jflannel.linuxnet.netns;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import org.jflannel.linuxnet.Cmd;
import org.jflannel.testbase.NetnsPrivilege;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Without CAP_NET_ADMIN and CAP_SYS_ADMIN (a child JVM run under setpriv with both dropped from
 * its bounding set), the integration fixture fails rather than skips, and creating a namespace
 * fails with a clear EPERM error and leaves no file behind.
 */
@Tag("netns")
class PrivilegeIT {

    @Test
    void missingPrivilegeFailsWithClearErrors() throws Exception {
        NetnsPrivilege.require(); // dropping capabilities needs them in the first place
        String name = "nopriv-" + Long.toString(ThreadLocalRandom.current().nextLong(1L << 30), 36);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String out = Cmd.run("setpriv", "--inh-caps=-all", "--bounding-set=-net_admin,-sys_admin", "--",
                java, "-cp", System.getProperty("java.class.path"), NoPrivilegeProbe.class.getName(), name);

        assertThat(out).contains("fixture: org.opentest4j.AssertionFailedError: netns tests need CAP_NET_ADMIN");
        assertThat(out).containsPattern("netns: org\\.jflannel\\.linuxnet\\.NetlinkException: .*EPERM \\(1\\)");
        assertThat(Files.exists(NetNs.RUN_DIR.resolve(name))).isFalse();
    }
}
