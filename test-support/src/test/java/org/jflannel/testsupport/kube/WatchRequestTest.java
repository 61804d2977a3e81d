package org.jflannel.testsupport.kube;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WatchRequestTest {

    @ParameterizedTest
    @CsvSource({
            "GET, /api/v1/nodes?watch=true, true",
            "GET, /api/v1/nodes?allowWatchBookmarks=true&watch=1, true",
            "GET, /api/v1/nodes?watch=false, false",
            "GET, /api/v1/nodes, false",
            "GET, /api/v1/nodes/n1, false",
            "PATCH, /api/v1/nodes?watch=true, false"})
    void watchIsAGetWithWatchTrueOrOne(String method, String uri, boolean watch) {
        assertThat(WatchRequest.isWatch(method, uri)).isEqualTo(watch);
    }

    @Test
    void clientGoWatchParametersAreRead() {
        WatchRequest r = WatchRequest.parse(
                "/api/v1/nodes?allowWatchBookmarks=true&resourceVersion=1234&timeoutSeconds=487&watch=true");

        assertThat(r).isEqualTo(new WatchRequest("/api/v1/nodes", "1234", true, 487, false, ""));
        assertThat(r.startsWithState()).isFalse();
        assertThat(r.resourceVersionNumber()).isEqualTo(1234);
    }

    @ParameterizedTest
    @CsvSource({"'', true", "0, true", "17, false"})
    void noVersionOrZeroStartsWithTheCurrentState(String rv, boolean state) {
        assertThat(WatchRequest.parse("/api/v1/nodes?watch=true&resourceVersion=" + rv).startsWithState()).isEqualTo(state);
    }

    @Test
    void sendInitialEventsStartsWithTheStateWhateverTheVersion() {
        assertThat(WatchRequest.parse("/api/v1/nodes?watch=true&sendInitialEvents=true&resourceVersion=9"
                + "&resourceVersionMatch=NotOlderThan").startsWithState()).isTrue();
    }

    @Test
    void selectorsAreDecodedTheNameFromTheFieldSelectorTheLabelsKeptInTheListPath() {
        WatchRequest r = WatchRequest.parse("/api/v1/nodes?fieldSelector=metadata.name%3Dnode-2&labelSelector=role%3Dw"
                + "&watch=true");

        assertThat(r.name()).isEqualTo("node-2");
        assertThat(r.listPath()).isEqualTo("/api/v1/nodes?labelSelector=role%3Dw");
        assertThat(WatchRequest.parse("/api/v1/nodes?watch=true&fieldSelector=metadata.name%3D%3Dn9").name()).isEqualTo("n9");
    }

    @Test
    void malformedParametersAreRejectedNamingThem() {
        assertThatThrownBy(() -> WatchRequest.parse("/api/v1/nodes?watch=true&resourceVersion=abc"))
                .hasMessageStartingWith("resourceVersion:");
        assertThatThrownBy(() -> WatchRequest.parse("/api/v1/nodes?watch=true&timeoutSeconds=x"))
                .hasMessageStartingWith("timeoutSeconds:");
        assertThatThrownBy(() -> WatchRequest.parse("/api/v1/nodes?watch=true&timeoutSeconds=-1"))
                .hasMessageStartingWith("timeoutSeconds:");
    }
}
