package org.jflannel.subnet.kube;

import org.jflannel.core.ConfigException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KubeAnnotationsTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
            "flannel.alpha.coreos.com,   flannel.alpha.coreos.com/backend-data",
            "flannel.alpha.coreos.com/,  flannel.alpha.coreos.com/backend-data",
            "example.com/cni,            example.com/cni-backend-data",
            "example.com/cni-,           example.com/cni-backend-data",
            "example.com/my_net,         example.com/my_net-backend-data",
            "a.b.c.example.com,          a.b.c.example.com/backend-data",
            // the regexp has no leading ^: a lower-case tail is enough (Go MatchString, Java find())
            "Foo.Example.com,            Foo.Example.com/backend-data",
            "UP.example.com/cni,         UP.example.com/cni-backend-data",
    })
    void validPrefixesAreNormalisedAsUpstream(String raw, String backendDataKey) throws ConfigException {
        assertThat(KubeAnnotations.forPrefix(raw).backendData()).isEqualTo(backendDataKey);
    }

    @ParameterizedTest(name = "[{index}] \"{0}\"")
    @CsvSource(delimiter = '|', value = {
            "a.com/b/c          | subnet/kube: prefix can contain at most single slash",
            "//                 | subnet/kube: prefix can contain at most single slash",
            "example            | subnet/kube: prefix must be in a format: fqdn/[0-9a-z-_]*",
            "EXAMPLE.COM        | subnet/kube: prefix must be in a format: fqdn/[0-9a-z-_]*",
            "example.com/UPPER  | subnet/kube: prefix must be in a format: fqdn/[0-9a-z-_]*",
            "example.com/a.b    | subnet/kube: prefix must be in a format: fqdn/[0-9a-z-_]*",
            "/cni               | subnet/kube: prefix must be in a format: fqdn/[0-9a-z-_]*",
            "''                 | subnet/kube: prefix must be in a format: fqdn/[0-9a-z-_]*",
    })
    void invalidPrefixesFailWithUpstreamsMessage(String raw, String message) {
        assertThatThrownBy(() -> KubeAnnotations.forPrefix(raw))
                .isInstanceOf(ConfigException.class).hasMessage(message);
    }

    @org.junit.jupiter.api.Test
    void everyKeyOfReference42UnderTheDefaultPrefix() throws ConfigException {
        KubeAnnotations k = KubeAnnotations.forPrefix(KubeAnnotations.DEFAULT_PREFIX);

        assertThat(java.util.List.of(k.subnetKubeManaged(), k.backendType(), k.backendData(), k.backendV6Data(),
                k.publicIp(), k.publicIpv6(), k.publicIpOverwrite(), k.publicIpv6Overwrite(), k.nodePublicIp(),
                k.nodePublicIpv6())).containsExactly(
                "flannel.alpha.coreos.com/kube-subnet-manager",
                "flannel.alpha.coreos.com/backend-type",
                "flannel.alpha.coreos.com/backend-data",
                "flannel.alpha.coreos.com/backend-v6-data",
                "flannel.alpha.coreos.com/public-ip",
                "flannel.alpha.coreos.com/public-ipv6",
                "flannel.alpha.coreos.com/public-ip-overwrite",
                "flannel.alpha.coreos.com/public-ipv6-overwrite",
                "flannel.alpha.coreos.com/node-public-ip",
                "flannel.alpha.coreos.com/node-public-ipv6");
    }
}
