package com.marcnuri.helm;

import com.marcnuri.helm.jni.RepoServerOptions;

/**
 * helm-java's in-process OCI registry (the one its own push tests use: Helm's test registry in the
 * native library), reachable only from this package (its library holder is package-private), so
 * this bridge lives here; the chart's test (org.jflannel.e2e.ChartFromOciRegistryTest) uses nothing
 * else of it. The native library is the same instance the rest of the JVM's Helm calls use: a second
 * copy would start a second Go runtime in the process.
 */
public final class TestOciRegistry implements AutoCloseable {
    private final String address;

    private TestOciRegistry(String address) {
        this.address = address;
    }

    /** Starts a registry on a free local port that accepts {@code username} with {@code password}. */
    public static TestOciRegistry start(String password) {
        String address = Helm.HelmLibHolder.INSTANCE.RepoOciServerStart(new RepoServerOptions(null, null, password)).out;
        if (address == null || address.isBlank()) {
            throw new IllegalStateException("helm-java's OCI test registry did not start");
        }
        return new TestOciRegistry(address);
    }

    /** {@code host:port}. */
    public String address() {
        return address;
    }

    @Override
    public void close() {
        Helm.HelmLibHolder.INSTANCE.RepoServerStop(address);
    }
}
