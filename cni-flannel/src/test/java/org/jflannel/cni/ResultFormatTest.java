package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The delegate's result printed again in its version (REFERENCE §11.8), from canned delegate output. */
class ResultFormatTest {

    @TempDir
    Path dir;

    private String add(String cniVersion, String delegateOutput) throws Exception {
        PluginHarness h = new PluginHarness(dir).subnetEnv(PluginHarness.V4_ENV).reply("ADD", delegateOutput);
        PluginHarness.Outcome o = h.run("ADD", h.config(cniVersion == null ? "" : "\"cniVersion\":\"" + cniVersion + "\""));
        assertThat(o.exit()).as(o.stdout()).isZero();
        return o.stdout();
    }

    @Test
    void v010WithoutVersionAnywhereTakesTheConfigsAndPrintsIp4() throws Exception {
        String out = add(null, "{\"ip4\":{\"ip\":\"10.1.17.2/24\",\"gateway\":\"10.1.17.1\",\"routes\":[{\"dst\":\"10.1.0.0/16\"}]},\"extra\":1}");
        assertThat(out).isEqualTo("""
            {
                "cniVersion": "0.1.0",
                "ip4": {
                    "ip": "10.1.17.2/24",
                    "gateway": "10.1.17.1",
                    "routes": [
                        {
                            "dst": "10.1.0.0/16"
                        }
                    ]
                },
                "dns": {}
            }""");
    }

    @Test
    void v031KeepsFieldOrderVersionsAndEmptyDns() throws Exception {
        String out = add("0.3.1", "{\"dns\":{},\"routes\":[{\"gw\":\"10.1.17.1\",\"dst\":\"0.0.0.0/0\"}],\"ips\":[{\"gateway\":\"10.1.17.1\","
            + "\"address\":\"10.1.17.2/24\",\"interface\":2,\"version\":\"4\"}],\"interfaces\":[{\"name\":\"cni0\",\"mac\":\"2e:2b:00:00:00:01\"},"
            + "{\"sandbox\":\"/run/netns/p\",\"mac\":\"d6:bb:00:00:00:01\",\"name\":\"eth0\"}],\"cniVersion\":\"0.3.1\"}");
        assertThat(out).isEqualTo("""
            {
                "cniVersion": "0.3.1",
                "interfaces": [
                    {
                        "name": "cni0",
                        "mac": "2e:2b:00:00:00:01"
                    },
                    {
                        "name": "eth0",
                        "mac": "d6:bb:00:00:00:01",
                        "sandbox": "/run/netns/p"
                    }
                ],
                "ips": [
                    {
                        "version": "4",
                        "interface": 2,
                        "address": "10.1.17.2/24",
                        "gateway": "10.1.17.1"
                    }
                ],
                "routes": [
                    {
                        "dst": "0.0.0.0/0",
                        "gw": "10.1.17.1"
                    }
                ],
                "dns": {}
            }""");
    }

    @Test
    void v040PrintsDualStackAndDns() throws Exception {
        String out = add("0.4.0", "{\"cniVersion\":\"0.4.0\",\"ips\":[{\"version\":\"6\",\"interface\":0,\"address\":\"FC00::2/64\"}],"
            + "\"dns\":{\"nameservers\":[\"10.96.0.10\"],\"search\":[\"svc\"]}}");
        assertThat(out).isEqualTo("""
            {
                "cniVersion": "0.4.0",
                "ips": [
                    {
                        "version": "6",
                        "interface": 0,
                        "address": "fc00::2/64"
                    }
                ],
                "dns": {
                    "nameservers": [
                        "10.96.0.10"
                    ],
                    "search": [
                        "svc"
                    ]
                }
            }""");
    }

    @Test
    void v100SortsKeysDropsVersionAndOmitsEmptyDns() throws Exception {
        String out = add("1.0.0", "{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"eth0\",\"mac\":\"d6:bb:00:00:00:01\",\"mtu\":1450,"
            + "\"sandbox\":\"/run/netns/p\"}],\"ips\":[{\"interface\":0,\"address\":\"10.1.17.2/24\",\"gateway\":\"10.1.17.1\",\"version\":\"4\"}],"
            + "\"routes\":[{\"dst\":\"10.1.0.0/16\",\"mtu\":1400,\"advmss\":1360}],\"dns\":{}}");
        assertThat(out).isEqualTo("""
            {
                "cniVersion": "1.0.0",
                "interfaces": [
                    {
                        "mac": "d6:bb:00:00:00:01",
                        "mtu": 1450,
                        "name": "eth0",
                        "sandbox": "/run/netns/p"
                    }
                ],
                "ips": [
                    {
                        "address": "10.1.17.2/24",
                        "gateway": "10.1.17.1",
                        "interface": 0
                    }
                ],
                "routes": [
                    {
                        "advmss": 1360,
                        "dst": "10.1.0.0/16",
                        "mtu": 1400
                    }
                ]
            }""");
    }

    @Test
    void resultVersionWinsOverTheConfigs() throws Exception {
        String out = add("1.0.0", "{\"cniVersion\":\"0.2.0\",\"ip4\":{\"ip\":\"10.1.17.2/24\"}}");
        assertThat(out).startsWith("{\n    \"cniVersion\": \"0.2.0\",\n    \"ip4\": {\n        \"ip\": \"10.1.17.2/24\"\n    },");
    }
}
