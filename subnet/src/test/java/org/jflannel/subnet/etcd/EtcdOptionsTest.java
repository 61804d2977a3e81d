package org.jflannel.subnet.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class EtcdOptionsTest {

    @Test
    void toStringNeverShowsThePassword() {
        EtcdOptions o = new EtcdOptions(List.of("https://e:2379"), null, "k.pem", "c.pem", "ca.pem", "flannel", "s3cr3t-pw");
        assertThat(o.toString()).doesNotContain("s3cr3t-pw").contains("password=****").contains("username=flannel");
        assertThat(o.password()).isEqualTo("s3cr3t-pw");
    }

    @Test
    void defaultsAndKeysFollowUpstream() {
        EtcdOptions o = new EtcdOptions(null, null, null, null, null, null, null);
        assertThat(o.endpoints()).containsExactly("http://127.0.0.1:4001", "http://127.0.0.1:2379");
        assertThat(o.configKey()).isEqualTo("/coreos.com/network/config");
        assertThat(o.subnetsPrefix()).isEqualTo("/coreos.com/network/subnets");
        assertThat(o.subnetKey("10.5.34.0-24")).isEqualTo("/coreos.com/network/subnets/10.5.34.0-24");
        assertThat(EtcdOptions.of(List.of("http://x:1"), "/my/net/").configKey()).isEqualTo("/my/net/config");
    }

    @Test
    void tlsOnlyWithBothKeyAndCertificate() {
        assertThat(new EtcdOptions(null, null, "k", "c", "", "", "").tls()).isTrue();
        assertThat(new EtcdOptions(null, null, "k", "", "ca", "", "").tls()).isFalse();
        assertThat(new EtcdOptions(null, null, "", "c", "ca", "", "").tls()).isFalse();
    }

    @Test
    void renewMarginMustLieInsideTheLeaseTtl() {
        assertThat(EtcdTimings.defaults(60).renewMargin()).isEqualTo(Duration.ofMinutes(60));
        assertThatThrownBy(() -> EtcdTimings.defaults(1440)).hasMessageContaining("subnet-lease-renew-margin");
        assertThatThrownBy(() -> EtcdTimings.defaults(0)).hasMessageContaining("subnet-lease-renew-margin");
    }
}
