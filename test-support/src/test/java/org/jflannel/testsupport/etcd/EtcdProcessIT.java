package org.jflannel.testsupport.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The etcd test fixture itself: healthy on start, restartable on the same port, killed by PID on close. */
@Tag("etcd")
class EtcdProcessIT {

    @Test
    void startsHealthyRestartsOnTheSamePortAndIsKilledOnClose() throws Exception {
        long pid;
        try (EtcdProcess etcd = EtcdProcess.start()) {
            assertThat(health(etcd)).contains("\"health\":\"true\"");
            int port = etcd.clientPort();
            etcd.stop();
            assertThat(etcd.isRunning()).isFalse();
            etcd.restart();
            assertThat(etcd.clientPort()).isEqualTo(port);
            assertThat(health(etcd)).contains("\"health\":\"true\"");
            pid = etcd.pid();
            assertThat(pid).isPositive();
        }
        Optional<ProcessHandle> after = ProcessHandle.of(pid);
        assertThat(after.map(ProcessHandle::isAlive).orElse(false)).as("etcd pid %d after close", pid).isFalse();
    }

    private static String health(EtcdProcess etcd) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(etcd.endpoint() + "/health")).build();
        return HttpClient.newHttpClient().send(req, HttpResponse.BodyHandlers.ofString()).body();
    }
}
