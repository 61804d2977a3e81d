package org.jflannel.cni;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import org.jflannel.core.CniSubnetEnv;
import org.jflannel.core.ConfigException;

/**
 * The host as flanneld sees it during a fast-path request: each effect is a step the launcher
 * performs where the runtime started it, and whose outcome comes back over the connection. The
 * launcher decides nothing (which delegate, which bytes, which message): it runs a delegate found
 * by a plain name on its own CNI_PATH, with its own environment, and keeps the one scratch file
 * named by its own CNI_CONTAINERID in its own data directory (JFLANNEL_CNI_DATA_DIR, else
 * /var/lib/cni/flannel); a configuration that names another data directory, or a subnet.env this
 * daemon does not write, is not served here ({@link Host.Fallback}). A broken connection is an
 * {@link UncheckedIOException}: the request ends and the launcher runs the plugin's own JVM.
 */
final class RemoteHost implements Host {

    static final String DEFAULT_DATA_DIR = "/var/lib/cni/flannel";

    private final InputStream in;
    private final OutputStream out;
    private final Predicate<Path> servesSubnetFile;
    private final String dataDir;
    private final boolean ownNetns;
    private boolean effects;

    RemoteHost(InputStream in, OutputStream out, Predicate<Path> servesSubnetFile, Map<String, String> env, boolean ownNetns) {
        this.in = in;
        this.out = out;
        this.servesSubnetFile = servesSubnetFile;
        this.dataDir = env.getOrDefault("JFLANNEL_CNI_DATA_DIR", DEFAULT_DATA_DIR);
        this.ownNetns = ownNetns;
    }

    @Override
    public CniSubnetEnv readSubnetEnv(String path) throws ConfigException {
        if (path.isEmpty() || !servesSubnetFile.test(Path.of(path))) {
            throw fallback("subnetFile " + path + " is not the daemon's");
        }
        return CniSubnetEnv.read(path); // the daemon's own file: /run/flannel is the host's
    }

    @Override
    public Optional<String> findPlugin(String plugin, List<String> dirs) {
        Wire.Frame r = step(new Wire.Builder(Wire.STEP).u8(Wire.FIND).string(plugin));
        try {
            boolean found = r.u8() == 1;
            String path = r.string();
            r.end();
            // the launcher searched the same CNI_PATH; the text as Java's Path.of(dir, plugin) gives it
            return found ? Optional.of(Path.of(path).toString()) : Optional.empty();
        } catch (Wire.MalformedException e) {
            throw broken(e);
        }
    }

    @Override
    public Ran run(String plugin, String path, String command, byte[] stdin) throws StartFailure {
        effects = true;
        Wire.Frame r = step(new Wire.Builder(Wire.STEP).u8(Wire.EXEC).string(plugin).string(command).bytes(stdin));
        try {
            int kind = r.u8();
            int status = r.i32();
            byte[] stdout = r.bytes();
            byte[] stderr = r.bytes();
            r.end();
            return switch (kind) {
                case 0 -> new Ran(status, stdout, stderr);
                case 1 -> throw new StartFailure(Wire.errnoText(status));
                default -> throw new Wire.MalformedException("exec refused by the launcher");
            };
        } catch (Wire.MalformedException e) {
            throw broken(e);
        }
    }

    @Override
    public void writeScratch(String dir, String containerId, byte[] bytes) throws CniException {
        served(dir);
        effects = true;
        Wire.Frame r = step(new Wire.Builder(Wire.STEP).u8(Wire.WRITE_SCRATCH).bytes(bytes));
        try {
            int errno = r.i32();
            String failed = r.string();
            r.end();
            if (errno != 0) {
                throw CniException.internal(ioText("open", failed, errno));
            }
        } catch (Wire.MalformedException e) {
            throw broken(e);
        }
    }

    @Override
    public Optional<byte[]> readScratch(String dir, String containerId) throws CniException {
        served(dir);
        Wire.Frame r = step(new Wire.Builder(Wire.STEP).u8(Wire.READ_SCRATCH));
        try {
            int status = r.u8();
            int errno = r.i32();
            byte[] data = r.bytes();
            r.end();
            String p = Path.of(dir, containerId).toString();
            return switch (status) {
                case 0 -> Optional.of(data);
                case 1 -> Optional.empty();
                default -> throw CniException.internal(errno == 21 ? "read " + p + ": is a directory" : ioText("open", p, errno));
            };
        } catch (Wire.MalformedException e) {
            throw broken(e);
        }
    }

    @Override
    public void removeScratch(String dir, String containerId) {
        effects = true;
        Wire.Frame r = step(new Wire.Builder(Wire.STEP).u8(Wire.REMOVE_SCRATCH));
        try {
            r.i32(); // best effort, as ScratchStore.remove
            r.end();
        } catch (Wire.MalformedException e) {
            throw broken(e);
        }
    }

    @Override
    public List<String> scratchIds(String dir) {
        throw fallback("GC lists the data directory: not a step");
    }

    @Override
    public boolean isOwnNetns(String netns) {
        return ownNetns; // the launcher compared CNI_NETNS with its own namespace before it asked
    }

    /** ScratchStore.goError's text for an errno the launcher reported. */
    private static String ioText(String op, String path, int errno) {
        return switch (errno) {
            case 2, 20, 13, 17 -> op + " " + path + ": " + Wire.errnoText(errno);
            default -> op + " " + path + ": " + path + ": " + Wire.errnoText(errno); // FileSystemException's message
        };
    }

    private void served(String dir) {
        if (!dir.equals(dataDir)) {
            throw fallback("dataDir " + dir + " is not the launcher's " + dataDir);
        }
    }

    private Fallback fallback(String why) {
        if (effects) {
            throw new IllegalStateException("fast path: cannot fall back after a step with effects: " + why);
        }
        return new Fallback(why);
    }

    private Wire.Frame step(Wire.Builder step) {
        try {
            step.writeTo(out);
            Wire.Frame r = Wire.read(in, Wire.MAX_REPLY);
            if (r.version() != Wire.VERSION || r.type() != Wire.REPLY) {
                throw new Wire.MalformedException("expected a reply, got type " + r.type() + " version " + r.version());
            }
            return r;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (Wire.MalformedException e) {
            throw broken(e);
        }
    }

    private static UncheckedIOException broken(Wire.MalformedException e) {
        return new UncheckedIOException(new IOException("fast path: malformed reply: " + e.getMessage(), e));
    }
}
