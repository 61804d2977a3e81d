package org.jflannel.cni;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
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
 *
 * <p>Round trips are what a request costs here, so steps travel together (Wire version 2): a scratch
 * file's write waits and goes with the next step (the delegate's FIND and EXEC, which also travel as
 * one), and the launcher performs a frame's steps in order until one fails; the scratch file's removal,
 * whose outcome changes nothing, goes with the result ({@link #takeFinalSteps}); and the launcher sent
 * its scratch file with the request, so DEL reads it without asking.
 */
final class RemoteHost implements Host {

    static final String DEFAULT_DATA_DIR = "/var/lib/cni/flannel";

    /** The launcher's scratch file as it sent it with the request: READ_SCRATCH's reply. */
    record Prefetched(int status, int errno, byte[] data) {
    }

    private final InputStream in;
    private final OutputStream out;
    private final Predicate<Path> servesSubnetFile;
    private final String dataDir;
    private final boolean ownNetns;
    private Prefetched prefetched;
    private boolean effects;
    /** A WRITE_SCRATCH not sent yet: it goes first in the next step frame. */
    private byte[] pendingWrite;
    /** REMOVE_SCRATCH steps not sent yet: with the next step frame, or with the result. */
    private int pendingRemoves;
    /** How many of the last frame's own steps (after the waiting ones) the launcher performed. */
    private int performed;

    RemoteHost(InputStream in, OutputStream out, Predicate<Path> servesSubnetFile, Map<String, String> env, boolean ownNetns,
               Prefetched prefetched) {
        this.in = in;
        this.out = out;
        this.servesSubnetFile = servesSubnetFile;
        this.dataDir = env.getOrDefault("JFLANNEL_CNI_DATA_DIR", DEFAULT_DATA_DIR);
        this.ownNetns = ownNetns;
        this.prefetched = prefetched;
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
        Wire.Frame r = steps(List.of(Wire.Builder.step(Wire.FIND).string(plugin)));
        try {
            expect(1);
            Optional<String> found = found(r);
            r.end();
            return found;
        } catch (Wire.MalformedException e) {
            throw broken(e);
        }
    }

    @Override
    public Optional<Launched> findAndRun(String plugin, List<String> dirs, String command, byte[] stdin) {
        effects = true;
        // the launcher runs EXEC only when FIND found the plugin: one round trip
        Wire.Frame r = steps(List.of(Wire.Builder.step(Wire.FIND).string(plugin), exec(plugin, command, stdin)));
        try {
            Optional<String> path = found(r);
            expect(path.isEmpty() ? 1 : 2); // the launcher stops at the first step that fails
            if (path.isEmpty()) {
                r.end();
                return Optional.empty();
            }
            Launched l;
            try {
                l = new Launched(path.get(), ran(r), null);
            } catch (StartFailure e) {
                l = new Launched(path.get(), null, e);
            }
            r.end();
            return Optional.of(l);
        } catch (Wire.MalformedException e) {
            throw broken(e);
        }
    }

    @Override
    public Ran run(String plugin, String path, String command, byte[] stdin) throws StartFailure {
        effects = true;
        Wire.Frame r = steps(List.of(exec(plugin, command, stdin)));
        try {
            expect(1);
            Ran ran = ran(r);
            r.end();
            return ran;
        } catch (Wire.MalformedException e) {
            throw broken(e);
        }
    }

    @Override
    public void writeScratch(String dir, String containerId, byte[] bytes) {
        served(dir);
        if (pendingWrite != null) {
            steps(List.of()); // two writes in a row: the first one's outcome first
        }
        effects = true;
        pendingWrite = bytes; // sent with the next step; its failure then is this call's (LateFailure)
    }

    @Override
    public Optional<byte[]> readScratch(String dir, String containerId) throws CniException {
        served(dir);
        Prefetched p = prefetched;
        prefetched = null;
        if (p == null || effects) {
            Wire.Frame r = steps(List.of(Wire.Builder.step(Wire.READ_SCRATCH)));
            try {
                expect(1);
                p = new Prefetched(r.u8(), r.i32(), r.bytes());
                r.end();
            } catch (Wire.MalformedException e) {
                throw broken(e);
            }
        }
        String path = Path.of(dir, containerId).toString();
        return switch (p.status()) {
            case 0 -> Optional.of(p.data());
            case 1 -> Optional.empty();
            default -> throw CniException.internal(p.errno() == 21 ? "read " + path + ": is a directory" : ioText("open", path, p.errno()));
        };
    }

    @Override
    public void removeScratch(String dir, String containerId) {
        effects = true;
        pendingRemoves++; // best effort, as ScratchStore.remove: with the next frame
    }

    @Override
    public List<String> scratchIds(String dir) {
        throw fallback("GC lists the data directory: not a step");
    }

    @Override
    public boolean isOwnNetns(String netns) {
        return ownNetns; // the launcher compared CNI_NETNS with its own namespace before it asked
    }

    /**
     * The steps that go with the result (the launcher performs them, then prints): the removals asked
     * for since the last step. A write still waiting is sent first, as a step of its own (AddCommand
     * always runs the delegate after its write, so this does not happen; if it did, its failure would
     * not be the answer's, and the request ends: the launcher then runs its own JVM, which redoes it).
     */
    List<Wire.Builder> takeFinalSteps() {
        if (pendingWrite != null) {
            try {
                steps(List.of());
            } catch (LateFailure f) {
                throw new UncheckedIOException(new IOException("fast path: a scratch write failed after the answer was made: " + f.getMessage()));
            }
        }
        List<Wire.Builder> last = new ArrayList<>();
        for (; pendingRemoves > 0; pendingRemoves--) {
            last.add(Wire.Builder.step(Wire.REMOVE_SCRATCH));
        }
        return last;
    }

    private static Wire.Builder exec(String plugin, String command, byte[] stdin) {
        return Wire.Builder.step(Wire.EXEC).string(plugin).string(command).bytes(stdin);
    }

    /** FIND's reply: the text as Java's Path.of(dir, plugin) gives it (the launcher searched the same CNI_PATH). */
    private static Optional<String> found(Wire.Frame r) throws Wire.MalformedException {
        boolean found = r.u8() == 1;
        String path = r.string();
        return found ? Optional.of(Path.of(path).toString()) : Optional.empty();
    }

    private static Ran ran(Wire.Frame r) throws Wire.MalformedException, StartFailure {
        int kind = r.u8();
        int status = r.i32();
        byte[] stdout = r.bytes();
        byte[] stderr = r.bytes();
        return switch (kind) {
            case 0 -> new Ran(status, stdout, stderr);
            case 1 -> throw new StartFailure(Wire.errnoText(status));
            default -> throw new Wire.MalformedException("exec refused by the launcher");
        };
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

    /**
     * One step frame: the write and removals waiting, then {@code steps}; the reply positioned at the
     * first of {@code steps}' replies. A failed write ends the frame there: {@link LateFailure}.
     */
    private Wire.Frame steps(List<Wire.Builder> steps) {
        byte[] write = pendingWrite;
        int removes = pendingRemoves;
        pendingWrite = null;
        pendingRemoves = 0;
        Wire.Builder frame = new Wire.Builder(Wire.STEP).u8((write == null ? 0 : 1) + removes + steps.size());
        if (write != null) {
            frame.raw(Wire.Builder.step(Wire.WRITE_SCRATCH).bytes(write));
        }
        for (int i = 0; i < removes; i++) {
            frame.raw(Wire.Builder.step(Wire.REMOVE_SCRATCH));
        }
        for (Wire.Builder s : steps) {
            frame.raw(s);
        }
        try {
            frame.writeTo(out);
            Wire.Frame r = Wire.read(in, Wire.MAX_REPLY);
            if (r.version() != Wire.VERSION || r.type() != Wire.REPLY) {
                throw new Wire.MalformedException("expected a reply, got type " + r.type() + " version " + r.version());
            }
            int count = r.u8();
            if (write != null) {
                int errno = r.i32();
                String failed = r.string();
                if (errno != 0) {
                    r.end();
                    // the launcher names the data directory when making it failed: os.MkdirAll's "mkdir"
                    throw new LateFailure(CniException.internal(ioText(failed.equals(dataDir) ? "mkdir" : "open", failed, errno)));
                }
            }
            for (int i = 0; i < removes; i++) {
                r.i32(); // best effort
            }
            performed = count - (write == null ? 0 : 1) - removes;
            if (performed < 0 || performed > steps.size()) {
                throw new Wire.MalformedException(count + " steps performed of " + ((write == null ? 0 : 1) + removes + steps.size()));
            }
            return r;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (Wire.MalformedException e) {
            throw broken(e);
        }
    }

    private void expect(int steps) throws Wire.MalformedException {
        if (performed != steps) {
            throw new Wire.MalformedException(performed + " steps performed where " + steps + " were due");
        }
    }

    private static UncheckedIOException broken(Wire.MalformedException e) {
        return new UncheckedIOException(new IOException("fast path: malformed reply: " + e.getMessage(), e));
    }
}
