package org.jflannel.linuxnet.sys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.testbase.DatagramWitness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** sd_notify to a receiver bound by python3 (no privilege needed: AF_UNIX datagram sockets). */
class SdNotifyTest {

    @Test
    void readyArrivesAtAFileSystemSocket(@TempDir Path dir) throws Exception {
        String path = dir.resolve("notify.sock").toString();
        try (DatagramWitness w = DatagramWitness.bind(path, 20)) {
            assertThat(SdNotify.notify(Map.of("NOTIFY_SOCKET", path), "READY=1")).contains(path);
            assertThat(w.first().text()).isEqualTo("READY=1");
        }
    }

    @Test
    void readyArrivesAtAnAbstractSocket() throws Exception {
        String name = "@jflannel-sdnotify-" + Long.toString(ThreadLocalRandom.current().nextLong(1L << 40), 36);
        try (DatagramWitness w = DatagramWitness.bind(name, 20)) {
            assertThat(SdNotify.notify(Map.of("NOTIFY_SOCKET", name), "READY=1")).contains(name);
            assertThat(w.first().text()).isEqualTo("READY=1");
        }
    }

    @Test
    void unsetOrEmptyVariableSendsNothing() throws Exception {
        assertThat(SdNotify.notify(Map.of(), "READY=1")).isEmpty();
        assertThat(SdNotify.notify(Map.of("NOTIFY_SOCKET", ""), "READY=1")).isEmpty();
    }

    @Test
    void noReceiverIsAnErrorNamingTheSocketAndErrno(@TempDir Path dir) {
        String path = dir.resolve("nobody.sock").toString();
        assertThatThrownBy(() -> SdNotify.notify(Map.of("NOTIFY_SOCKET", path), "READY=1"))
                .isInstanceOf(NetlinkException.class)
                .hasMessage("sendto NOTIFY_SOCKET=" + path + ": ENOENT (2)");
    }

    @Test
    void tooLongPathIsAnErrorNamingTheVariable() {
        String path = "/" + "p".repeat(107); // 108 bytes: no room left for the NUL
        assertThatThrownBy(() -> SdNotify.notify(Map.of("NOTIFY_SOCKET", path), "READY=1"))
                .isInstanceOf(NetlinkException.class)
                .hasMessage("sd_notify NOTIFY_SOCKET=" + path + ": EINVAL (22): path is 108 bytes, sockaddr_un holds at most 107");
        String name = "@" + "a".repeat(108);
        assertThatThrownBy(() -> SdNotify.notify(Map.of("NOTIFY_SOCKET", name), "READY=1"))
                .isInstanceOf(NetlinkException.class).hasMessageContaining("NOTIFY_SOCKET=@a")
                .hasMessageEndingWith("path is 109 bytes, sockaddr_un holds at most 108");
    }

    @Test
    void sockaddrCountsOnlyTheUsedBytes() throws Exception {
        // a path: family, the bytes, one NUL
        assertThat(SdNotify.sockaddr("/run/n")).isEqualTo(bytes(family(), "/run/n\0"));
        // abstract: '@' becomes the leading NUL, no trailing NUL (it would be part of the name)
        assertThat(SdNotify.sockaddr("@sd")).isEqualTo(bytes(family(), "\0sd"));
        // the longest of each still fits sun_path[108]
        assertThat(SdNotify.sockaddr("/" + "p".repeat(106))).hasSize(2 + 108);
        assertThat(SdNotify.sockaddr("@" + "a".repeat(107))).hasSize(2 + 108);
    }

    private static byte[] family() {
        return ByteBuffer.allocate(2).order(ByteOrder.nativeOrder()).putShort((short) 1).array();
    }

    private static byte[] bytes(byte[] head, String tail) {
        byte[] t = tail.getBytes(StandardCharsets.US_ASCII);
        return ByteBuffer.allocate(head.length + t.length).put(head).put(t).array();
    }
}
