package org.jflannel.flanneld.install;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@code flanneld install-cni-plugin [DEST_DIR]}: puts the self-contained CNI plugin (the image's
 * {@code /opt/jflannel/cni/flannel}: one file, a static launcher carrying the {@code jflannel-<hash>/}
 * bundle with its own Java runtime, jars and class-data archive as its payload, see {@link PluginFile})
 * into DEST_DIR (the host's /opt/cni/bin), so the host needs no Java.
 *
 * <p>Safe while the kubelet runs ADDs and DELs, and across upgrades:
 * <ol>
 *   <li>the bundle is unpacked from the file's payload into a temporary directory beside its final
 *       place, file times and modes kept (the class-data archive checks its jar's), every file and
 *       directory fsynced, then renamed to {@code jflannel-<hash>} (its name carries a hash of its content,
 *       so a directory of that name is always whole; a damaged one is replaced the same way). The first
 *       ADD then finds it and unpacks nothing;</li>
 *   <li>the launcher, which names its bundle, is written last (temporary file, fsync, rename): an ADD
 *       runs the old launcher with the old bundle or the new launcher with the new bundle;</li>
 *   <li>the bundle the previous launcher named stays, so an ADD that started it just before finishes;
 *       older bundles and leftovers of interrupted installs are removed.</li>
 * </ol>
 * Installers exclude each other with a lock file in DEST_DIR. Unchanged content rewrites nothing.
 */
public final class CniPluginInstaller {
    /** The launcher's name: the CNI plugin type. */
    public static final String LAUNCHER = "flannel";
    static final Pattern BUNDLE = Pattern.compile("jflannel-[0-9a-f]{12}");
    private static final String LOCK = ".jflannel-install.lock";
    private static final String TMP_PREFIX = ".jflannel-tmp-";
    private static final String TRASH_PREFIX = ".jflannel-old-";

    /** What an install did. */
    public record Result(Path dest, String bundle, boolean bundleCopied, boolean launcherChanged, List<String> removed) {
        public Result {
            removed = List.copyOf(removed);
        }
    }

    private CniPluginInstaller() {
    }

    public static Result install(Path source, Path dest) throws IOException {
        Path launcher = source.resolve(LAUNCHER);
        if (!Files.isRegularFile(launcher)) {
            throw new IOException("install-cni-plugin: source " + source + " has no launcher " + LAUNCHER);
        }
        PluginFile plugin = pluginFile(launcher);
        if (Files.exists(dest) && !Files.isDirectory(dest)) {
            throw new IOException("install-cni-plugin: destination " + dest + " is not a directory");
        }
        try {
            Files.createDirectories(dest);
        } catch (IOException e) {
            throw new IOException("install-cni-plugin: cannot create destination directory " + dest + ": " + e, e);
        }
        try (FileChannel lockFile = FileChannel.open(dest.resolve(LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             FileLock ignored = lockFile.lock()) {
            return installLocked(plugin, dest);
        } catch (IOException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("install-cni-plugin:")) {
                throw e;
            }
            throw new IOException("install-cni-plugin: cannot install into " + dest + ": " + e, e);
        }
    }

    /** The source launcher as a one-file plugin, its payload's listing read once (a bad one fails here, before DEST changes). */
    private static PluginFile pluginFile(Path launcher) throws IOException {
        PluginFile plugin;
        try {
            plugin = PluginFile.open(launcher).orElseThrow(() -> new IOException("install-cni-plugin: source "
                    + launcher + " is not a one-file plugin (no " + PluginFile.MAGIC + " trailer)"));
            plugin.entries();
        } catch (IOException e) {
            throw e.getMessage() != null && e.getMessage().startsWith("install-cni-plugin:") ? e
                    : new IOException("install-cni-plugin: source " + launcher + ": " + e.getMessage(), e);
        }
        return plugin;
    }

    private static Result installLocked(PluginFile plugin, Path dest) throws IOException {
        String bundle = plugin.bundle();
        List<PluginFile.Entry> entries = plugin.entries();
        Path launcherDest = dest.resolve(LAUNCHER);
        // the bundle the launcher names now: kept, an ADD may be running it
        Optional<String> previous = namedBundle(launcherDest).filter(b -> !b.equals(bundle));

        Path bundleDest = dest.resolve(bundle);
        boolean copied = false;
        if (!sameTree(entries, bundleDest)) {
            Path tmp = Files.createTempDirectory(dest, TMP_PREFIX);
            unpack(plugin, entries, tmp);
            if (Files.exists(bundleDest, LinkOption.NOFOLLOW_LINKS)) {
                // damaged (a file missing or changed): moved aside, then removed below
                Files.move(bundleDest, Files.createTempDirectory(dest, TRASH_PREFIX).resolve(bundle), StandardCopyOption.ATOMIC_MOVE);
            }
            Files.move(tmp, bundleDest, StandardCopyOption.ATOMIC_MOVE);
            fsync(dest);
            copied = true;
        }

        // the launcher carries the bundle as its payload (tens of MB): compared and copied as streams
        boolean launcherChanged = false;
        if (!(Files.isRegularFile(launcherDest, LinkOption.NOFOLLOW_LINKS)
                && Files.mismatch(launcherDest, plugin.file()) == -1L
                && Files.isExecutable(launcherDest))) {
            copyAtomically(plugin.file(), launcherDest);
            launcherChanged = true;
        }

        String keep = previous.isPresent() ? previous.get() : newestOther(dest, bundle).orElse(bundle);
        List<String> removed = new ArrayList<>();
        try (Stream<Path> s = Files.list(dest)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                String name = p.getFileName().toString();
                boolean oldBundle = BUNDLE.matcher(name).matches() && !name.equals(bundle) && !name.equals(keep);
                boolean leftover = name.startsWith(TMP_PREFIX) || name.startsWith(TRASH_PREFIX);
                if ((oldBundle || leftover) && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    deleteTree(p);
                    removed.add(name);
                }
            }
        }
        if (!removed.isEmpty()) {
            fsync(dest);
        }
        return new Result(dest, bundle, copied, launcherChanged, removed);
    }

    /**
     * The bundle a launcher names, if it is one of ours: the id in the trailer of the one-file plugin
     * (packaging/plugin-file.sh: "JFLNPAY1", offset, size, id), or the name in an older shell launcher.
     */
    static Optional<String> namedBundle(Path launcher) throws IOException {
        if (!Files.isRegularFile(launcher, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.empty();
        }
        try {
            Optional<PluginFile> plugin = PluginFile.open(launcher);
            if (plugin.isPresent()) {
                return Optional.of(plugin.get().bundle());
            }
        } catch (IOException e) {
            return Optional.empty(); // a damaged trailer names nothing we must keep
        }
        if (Files.size(launcher) > 64 * 1024) {
            return Optional.empty();
        }
        Matcher m = BUNDLE.matcher(new String(Files.readAllBytes(launcher), StandardCharsets.UTF_8));
        return m.find() ? Optional.of(m.group()) : Optional.empty();
    }

    /** A temporary file beside {@code target}, the content streamed in, fsync, chmod 0755, rename, directory fsync. */
    private static void copyAtomically(Path from, Path target) throws IOException {
        Path tmp = Files.createTempFile(target.getParent(), "." + target.getFileName() + ".", ".tmp");
        boolean renamed = false;
        try {
            Files.copy(from, tmp, StandardCopyOption.REPLACE_EXISTING);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ch.force(true);
            }
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            renamed = true;
        } finally {
            if (!renamed) {
                Files.deleteIfExists(tmp);
            }
        }
        fsync(target.getParent());
    }

    /** The most recently installed other bundle: kept when the launcher names the current one already. */
    private static Optional<String> newestOther(Path dest, String bundle) throws IOException {
        try (Stream<Path> s = Files.list(dest)) {
            return s.filter(p -> BUNDLE.matcher(p.getFileName().toString()).matches())
                    .filter(p -> !p.getFileName().toString().equals(bundle))
                    .max(Comparator.comparing(CniPluginInstaller::modified))
                    .map(p -> p.getFileName().toString());
        }
    }

    private static FileTime modified(Path p) {
        try {
            return Files.getLastModifiedTime(p, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            return FileTime.fromMillis(0);
        }
    }

    /** Whether {@code installed} holds every entry of the payload with the same type, size and mode (cheap; names carry the hash). */
    static boolean sameTree(List<PluginFile.Entry> entries, Path installed) throws IOException {
        if (!Files.isDirectory(installed, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        for (PluginFile.Entry e : entries) {
            Path q = e.name().isEmpty() ? installed : installed.resolve(e.name());
            boolean same = switch (e.type()) {
                case DIRECTORY -> Files.isDirectory(q, LinkOption.NOFOLLOW_LINKS);
                case SYMLINK -> Files.isSymbolicLink(q) && Files.readSymbolicLink(q).toString().equals(e.linkTarget());
                case FILE -> Files.isRegularFile(q, LinkOption.NOFOLLOW_LINKS) && Files.size(q) == e.size()
                        && mode(q) == e.mode();
            };
            if (!same) {
                return false;
            }
        }
        return true;
    }

    private static int mode(Path p) throws IOException {
        return (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
    }

    /**
     * Unpacks the payload into {@code to}: modes and times as archived (an AppCDS archive refuses a jar
     * whose mtime changed), every file and directory fsynced, directories' times set last.
     */
    private static void unpack(PluginFile plugin, List<PluginFile.Entry> entries, Path to) throws IOException {
        List<PluginFile.Entry> dirs = new ArrayList<>();
        for (PluginFile.Entry e : entries) {
            Path p = e.name().isEmpty() ? to : to.resolve(e.name());
            switch (e.type()) {
                case DIRECTORY -> {
                    Files.createDirectories(p);
                    dirs.add(e);
                }
                case SYMLINK -> Files.createSymbolicLink(p, Path.of(e.linkTarget()));
                case FILE -> {
                    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                        plugin.copyData(e, ch);
                        ch.force(true);
                    }
                    Files.setAttribute(p, "unix:mode", e.mode());
                    Files.setLastModifiedTime(p, FileTime.from(e.mtimeSeconds(), TimeUnit.SECONDS));
                }
            }
        }
        // deepest first, so setting a directory's time is not undone by creating inside it
        dirs.sort(Comparator.comparing((PluginFile.Entry e) -> e.name().length()).reversed());
        for (PluginFile.Entry e : dirs) {
            Path d = e.name().isEmpty() ? to : to.resolve(e.name());
            Files.setAttribute(d, "unix:mode", e.mode());
            fsync(d);
            Files.setLastModifiedTime(d, FileTime.from(e.mtimeSeconds(), TimeUnit.SECONDS));
        }
        if (dirs.stream().noneMatch(e -> e.name().isEmpty())) {
            Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rwxr-xr-x"));
            fsync(to);
        }
    }

    private static void deleteTree(Path root) throws IOException {
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                if (e != null) {
                    throw e;
                }
                Files.delete(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    private static void fsync(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }
}
