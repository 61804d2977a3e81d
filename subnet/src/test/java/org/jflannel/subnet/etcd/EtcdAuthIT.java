package org.jflannel.subnet.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.etcd.jetcd.Auth;
import io.etcd.jetcd.Client;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jflannel.core.Lease;
import org.jflannel.testsupport.etcd.EtcdExtension;
import org.jflannel.testsupport.etcd.EtcdProcess;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/** {@code --etcd-username}/{@code --etcd-password} against an etcd with authentication on; the password never reaches a log. */
@Tag("etcd")
@ExtendWith(EtcdExtension.class)
class EtcdAuthIT {
    private static final String PASSWORD = "pw-Zq81-never-logged";

    @Test
    void usernameAndPasswordAuthenticateAndThePasswordIsNeverLogged(EtcdProcess etcd) throws Exception {
        ListAppender<ILoggingEvent> logs = new ListAppender<>();
        logs.start();
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.addAppender(logs);
        try (EtcdAdmin admin = new EtcdAdmin(etcd.endpoint(), "/auth")) {
            admin.putConfig(EtcdSubnetManagerContractIT.CONFIG);
            enableAuth(etcd.endpoint());

            EtcdOptions good = new EtcdOptions(List.of(etcd.endpoint()), "/auth", "", "", "", "root", PASSWORD);
            try (EtcdSubnetManager m = new EtcdSubnetManager(good, null, null, EtcdAdmin.TIMINGS, () -> { })) {
                Lease lease = m.acquireLease(EtcdFaultsIT.attrs("192.0.2.10", "0e:00:00:00:00:10"));
                assertThat(lease.subnet()).isNotNull();
            }
            EtcdOptions bad = new EtcdOptions(List.of(etcd.endpoint()), "/auth", "", "", "", "root", "wrong-" + PASSWORD);
            try (EtcdSubnetManager m = new EtcdSubnetManager(bad, null, null, EtcdAdmin.TIMINGS, () -> { })) {
                assertThatThrownBy(m::networkConfig).isInstanceOf(IOException.class);
            }
        } finally {
            root.detachAppender(logs);
        }
        assertThat(logs.list).isNotEmpty()
                .noneMatch(l -> l.getFormattedMessage().contains(PASSWORD)
                        || (l.getThrowableProxy() != null && l.getThrowableProxy().getMessage() != null
                            && l.getThrowableProxy().getMessage().contains(PASSWORD)));
        assertThat(logs.list).anyMatch(l -> l.getFormattedMessage().contains("password=****"));
    }

    private static void enableAuth(String endpoint) throws Exception {
        try (Client c = Client.builder().endpoints(endpoint).build()) {
            Auth auth = c.getAuthClient();
            auth.roleAdd(EtcdStore.bytes("root")).get(10, TimeUnit.SECONDS);
            auth.userAdd(EtcdStore.bytes("root"), EtcdStore.bytes(PASSWORD)).get(10, TimeUnit.SECONDS);
            auth.userGrantRole(EtcdStore.bytes("root"), EtcdStore.bytes("root")).get(10, TimeUnit.SECONDS);
            auth.authEnable().get(10, TimeUnit.SECONDS);
        }
    }
}
