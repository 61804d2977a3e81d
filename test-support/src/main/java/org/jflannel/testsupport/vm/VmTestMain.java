package org.jflannel.testsupport.vm;

import java.io.PrintWriter;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;
import org.junit.platform.engine.discovery.DiscoverySelectors;

/**
 * Runs the test classes named in its arguments with the JUnit launcher and exits 0 only when every test
 * passed and at least one ran: how {@link KernelVm} runs test classes inside the kernel VM, where no Maven runs.
 * The last line it prints is {@code vm tests: found=N succeeded=N failed=N}.
 */
public final class VmTestMain {
    private VmTestMain() {
    }

    public static void main(String[] args) {
        LauncherDiscoveryRequestBuilder request = LauncherDiscoveryRequestBuilder.request();
        for (String c : args) {
            request.selectors(DiscoverySelectors.selectClass(c));
        }
        LauncherDiscoveryRequest r = request.build();
        Launcher launcher = LauncherFactory.create();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        launcher.execute(r, listener);
        TestExecutionSummary s = listener.getSummary();
        PrintWriter out = new PrintWriter(System.out, true);
        s.printFailuresTo(out, 40);
        out.println("vm tests: found=" + s.getTestsFoundCount() + " succeeded=" + s.getTestsSucceededCount() + " failed="
                + (s.getTestsFailedCount() + s.getContainersFailedCount()));
        out.flush();
        System.exit(s.getTestsFoundCount() > 0 && s.getTotalFailureCount() == 0 ? 0 : 1);
    }
}
