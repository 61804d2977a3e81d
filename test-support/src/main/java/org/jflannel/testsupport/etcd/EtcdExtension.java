package org.jflannel.testsupport.etcd;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension: one real etcd per test class ({@code @ExtendWith(EtcdExtension.class)}),
 * injected as an {@link EtcdProcess} parameter into constructors, lifecycle and test methods.
 * JUnit closes it after the class, also when tests fail, which kills etcd by PID.
 *
 * <p>A missing {@code /usr/bin/etcd} fails the class under {@code -Pintegration}
 * ({@code jflannel.integration=true}) and skips it otherwise.
 */
public final class EtcdExtension implements BeforeAllCallback, ParameterResolver {
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(EtcdExtension.class);
    private static final String KEY = "etcd";

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        if (!EtcdProcess.BINARY.toFile().canExecute()) {
            String why = "etcd binary missing: " + EtcdProcess.BINARY + " (install Debian package etcd-server)";
            if (Boolean.getBoolean("jflannel.integration")) {
                throw new IllegalStateException(why);
            }
            Assumptions.abort(why);
        }
        context.getStore(NS).put(KEY, new Resource(EtcdProcess.start()));
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == EtcdProcess.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Resource r = context.getStore(NS).get(KEY, Resource.class);
        if (r == null) {
            throw new ParameterResolutionException("EtcdExtension: no etcd started for " + context.getDisplayName());
        }
        return r.etcd;
    }

    /** Lets JUnit close etcd when the class's store closes (after all tests, whatever their outcome). */
    private record Resource(EtcdProcess etcd) implements ExtensionContext.Store.CloseableResource, AutoCloseable {
        @Override
        public void close() {
            etcd.close();
        }
    }
}
