package org.jflannel.flanneld.install;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The install subcommands, dispatched by {@code Main} before any flag parsing (the init containers
 * run them):
 * <pre>
 *   flanneld install-cni-plugin [DEST_DIR]   (default /opt/cni/bin)
 *   flanneld install-cni-conf SRC DEST
 * </pre>
 * Exit 0 when installed or already up to date, 1 with one line naming the path on any error, 2 for
 * bad usage. {@code JFLANNEL_CNI_BUNDLE} overrides where the CNI bundle is read from (the image's
 * /opt/jflannel/cni).
 */
public final class InstallCommand {
    public static final String INSTALL_CNI_PLUGIN = "install-cni-plugin";
    public static final String INSTALL_CNI_CONF = "install-cni-conf";
    static final String DEFAULT_BUNDLE = "/opt/jflannel/cni";
    static final String DEFAULT_CNI_BIN = "/opt/cni/bin";

    private InstallCommand() {
    }

    /** The exit code if {@code args} names an install subcommand, else empty (run the daemon). */
    public static Optional<Integer> run(List<String> args, Map<String, String> env, PrintStream err) {
        if (args.isEmpty()) {
            return Optional.empty();
        }
        String cmd = args.get(0);
        List<String> rest = args.subList(1, args.size());
        try {
            if (INSTALL_CNI_PLUGIN.equals(cmd)) {
                if (rest.size() > 1) {
                    err.println("usage: flanneld " + INSTALL_CNI_PLUGIN + " [DEST_DIR]");
                    return Optional.of(2);
                }
                Path source = Path.of(env.getOrDefault("JFLANNEL_CNI_BUNDLE", DEFAULT_BUNDLE));
                Path dest = Path.of(rest.isEmpty() ? DEFAULT_CNI_BIN : rest.get(0));
                CniPluginInstaller.Result r = CniPluginInstaller.install(source, dest);
                err.println(INSTALL_CNI_PLUGIN + ": " + (r.bundleCopied() || r.launcherChanged() ? "installed" : "up to date")
                        + " dest=" + r.dest() + " bundle=" + r.bundle() + " bundle_copied=" + r.bundleCopied()
                        + " launcher_changed=" + r.launcherChanged() + " removed=" + r.removed());
                return Optional.of(0);
            }
            if (INSTALL_CNI_CONF.equals(cmd)) {
                if (rest.size() != 2) {
                    err.println("usage: flanneld " + INSTALL_CNI_CONF + " SRC DEST");
                    return Optional.of(2);
                }
                CniConfInstaller.Result r = CniConfInstaller.install(Path.of(rest.get(0)), Path.of(rest.get(1)));
                err.println(INSTALL_CNI_CONF + ": " + (r.changed() ? "installed" : "up to date") + " dest=" + r.dest());
                return Optional.of(0);
            }
        } catch (IOException e) {
            err.println(e.getMessage());
            return Optional.of(1);
        }
        return Optional.empty();
    }
}
