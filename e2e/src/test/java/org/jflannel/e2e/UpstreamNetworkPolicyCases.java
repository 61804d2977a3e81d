package org.jflannel.e2e;

import java.util.List;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.Pod;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Kubernetes' NetworkPolicy e2e cases ({@link UpstreamNetpolCases}) on one cluster per class, run with
 * {@code --network-policy}: upstream's 9 pods in x, y, z spread over 3 nodes ({@link NetpolModel}), one case
 * after the other, each one's policies and labels undone after it. A subclass says which cluster (its
 * {@code ClusterPerClass}), which address family the probes use and which cases it runs.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class UpstreamNetworkPolicyCases {
    private final NetnsCluster cluster;
    private NetpolModel model;

    UpstreamNetworkPolicyCases(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    /** The family of the pods' addresses the probes go to: IPv4 unless a class says otherwise. */
    Pod.Family family() {
        return Pod.Family.IPV4;
    }

    /** The cases this class runs. */
    abstract List<UpstreamNetpolCases.Case> cases();

    NetpolModel model() {
        return model;
    }

    @BeforeAll
    void publishModel() throws Exception {
        model = NetpolModel.publish(cluster, family());
        model.probes().await("no policies", model.specTruth());
    }

    @AfterAll
    void closeModel() throws Exception {
        if (model != null) {
            model.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    @Order(1)
    void upstreamCase(UpstreamNetpolCases.Case c) throws Exception {
        try {
            c.body().run(new NetpolCaseRun(model, c.name(), c.pods()));
        } catch (Exception | Error e) {
            try {
                undo(c);
            } catch (Exception | Error again) {
                e.addSuppressed(again);
            }
            throw e;
        }
        undo(c);
    }

    /** Every case starts from the open cluster: its truth tables are its own policies', none left from before. */
    private void undo(UpstreamNetpolCases.Case c) throws Exception {
        model.reset();
        model.probes().await("after " + c.name() + ": policies deleted, labels back", model.specTruth());
    }
}
