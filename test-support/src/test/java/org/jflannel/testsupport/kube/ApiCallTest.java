package org.jflannel.testsupport.kube;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class ApiCallTest {

    @ParameterizedTest
    @CsvSource({
            "GET,    /api/v1/nodes/n1,                                 get,    '',   nodes",
            "GET,    /api/v1/nodes?limit=500,                          list,   '',   nodes",
            "GET,    /api/v1/nodes?resourceVersion=3&watch=true,       watch,  '',   nodes",
            "PATCH,  /api/v1/nodes/n1/status,                          patch,  '',   nodes/status",
            "GET,    /api/v1/namespaces/kube-flannel/pods/flannel-x,   get,    '',   pods",
            "GET,    /api/v1/namespaces/kube-flannel,                  get,    '',   namespaces",
            "POST,   /apis/apps/v1/namespaces/ns/daemonsets,           create, apps, daemonsets",
            "DELETE, /api/v1/nodes/n1,                                 delete, '',   nodes",
    })
    void classifiesRequestsAsRbacNamesThem(String method, String path, String verb, String group, String resource) {
        ApiCall call = ApiCall.of(method, path, null, null);

        assertThat(call.verb()).isEqualTo(verb);
        assertThat(call.group()).isEqualTo(group);
        assertThat(call.rbacResource()).isEqualTo(resource);
    }
}
