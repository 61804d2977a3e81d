package org.jflannel.testsupport.netns;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testbase.NetnsPrivilege;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Injects fresh {@link NetNs} parameters into test methods and deletes them after each test (also on
 * failure). Checks privilege first: without CAP_NET_ADMIN/CAP_SYS_ADMIN the test fails under
 * {@code -Djflannel.integration=true} and is skipped otherwise. Use through {@link NetnsTest} or
 * {@code @ExtendWith(NetnsExtension.class)}.
 */
public final class NetnsExtension implements BeforeEachCallback, ParameterResolver, AfterEachCallback {
    private static final ExtensionContext.Namespace STORE = ExtensionContext.Namespace.create(NetnsExtension.class);
    private static final String CREATED = "created";

    @Override
    public void beforeEach(ExtensionContext context) {
        NetnsPrivilege.require();
    }

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
        return p.getParameter().getType() == NetNs.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext e) {
        NetnsPrivilege.require();
        String name = NetnsNames.unique(p.getParameter().getName());
        try {
            NetNs ns = NetNs.create(name);
            created(e).add(ns);
            return ns;
        } catch (IOException ex) {
            throw new ParameterResolutionException("cannot create network namespace " + name + ": " + ex.getMessage(), ex);
        }
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        List<NetNs> all = created(context);
        IOException first = null;
        for (NetNs ns : all) {
            try {
                ns.delete();
            } catch (IOException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        all.clear();
        if (first != null) {
            throw first;
        }
    }

    @SuppressWarnings("unchecked")
    private static List<NetNs> created(ExtensionContext e) {
        return e.getStore(STORE).getOrComputeIfAbsent(CREATED, k -> new ArrayList<NetNs>(), List.class);
    }
}
