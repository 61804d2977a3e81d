package org.jflannel.testsupport.cluster;

import java.lang.reflect.Constructor;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.testbase.NetnsPrivilege;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestInstanceFactoryContext;
import org.junit.jupiter.api.extension.TestInstancePreConstructCallback;

/**
 * The e2e tests' cluster: one {@link NetnsCluster} per test instance (the e2e ITs are
 * {@code PER_CLASS}, so one per class), started before the instance is made and handed to its
 * constructor, its progress printed as {@code cluster: ...}. Root is checked first (fails under
 * {@code -Pintegration}, skips elsewhere). The cluster is kept in the class's extension store, which
 * JUnit closes after the class's own {@code @AfterAll} methods, also when the class failed to start:
 * <pre>{@code
 * @RegisterExtension
 * static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withBackend("udp"));
 * private final NetnsCluster cluster;
 *
 * EtcdUdpClusterIT(NetnsCluster cluster) {
 *     this.cluster = cluster;
 * }
 * }</pre>
 * Register it on a static field: an instance field's extension comes too late to take part in construction.
 */
public final class ClusterPerClass implements TestInstancePreConstructCallback, ParameterResolver {
    private static final ExtensionContext.Namespace STORE = ExtensionContext.Namespace.create(ClusterPerClass.class);
    private static final String CLUSTER = "cluster";

    private final ClusterOptions options;
    private final List<Runnable> checks;

    private ClusterPerClass(ClusterOptions options, List<Runnable> checks) {
        this.options = options;
        this.checks = List.copyOf(checks);
    }

    /** A cluster of {@code options} (their progress printed), for each test instance. */
    public static ClusterPerClass of(ClusterOptions options) {
        return new ClusterPerClass(options.withProgress(l -> System.out.println("cluster: " + l)), List.of());
    }

    /**
     * The same, with {@code check} run before the cluster is built: a check that aborts (an assumption, e.g. a
     * binary the class needs besides the cluster's, {@link UpstreamFlannel#flanneld()}) skips the class at no cost.
     */
    public ClusterPerClass requiring(Runnable check) {
        List<Runnable> all = new ArrayList<>(checks);
        all.add(check);
        return new ClusterPerClass(options, all);
    }

    @Override
    public void preConstructTestInstance(TestInstanceFactoryContext factory, ExtensionContext context) throws Exception {
        NetnsPrivilege.require(); // root; fails (never skips) under -Pintegration
        checks.forEach(Runnable::run);
        // an AutoCloseable in the store is closed with the context (JUnit 5.13+), whatever happened before
        context.getStore(STORE).put(CLUSTER, NetnsCluster.start(options));
    }

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
        return p.getParameter().getType() == NetnsCluster.class && p.getDeclaringExecutable() instanceof Constructor;
    }

    @Override
    public NetnsCluster resolveParameter(ParameterContext p, ExtensionContext e) {
        return e.getStore(STORE).get(CLUSTER, NetnsCluster.class);
    }
}
