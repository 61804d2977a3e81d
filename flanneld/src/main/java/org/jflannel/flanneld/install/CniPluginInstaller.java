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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@code flanneld install-cni-plugin [DEST_DIR]}: puts the self-contained CNI plugin (the image's
 * {@code /opt/jflannel/cni/}: the {@code flannel} launcher and one {@code jflannel-<hash>/} bundle with
 * its own Java runtime, jars and class-data archive) into DEST_DIR (the host's /opt/cni/bin), so the
 * host needs no Java.
 *
 * <p>Safe while the kubelet runs ADDs and DELs, and across upgrades:
 * <ol>
 *   <li>the bundle is copied to a temporary directory beside its final place, every file and directory
 *       fsynced, then renamed to {@code jflannel-<hash>} (its name carries a hash of its content, so a
 *       directory of that name is always whole; a damaged one is replaced the same way);</li>
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
    /** The one-file plugin's trailer (packaging/plugin-file.sh): magic, payload offset and size, bundle id. */
    private static final String TRAILER_MAGIC = "JFLNPAY1";
    private static final int TRAILER_SIZE = 48;

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
        String bundle = bundleName(source);
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
            return installLocked(source, bundle, dest);
        } catch (IOException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("install-cni-plugin:")) {
                throw e;
            }
            throw new IOException("install-cni-plugin: cannot install into " + dest + ": " + e, e);
        }
    }

    /** The one jflannel-HASH directory of the image's bundle. */
    static String bundleName(Path source) throws IOException {
        List<String> bundles = new ArrayList<>();
        try (Stream<Path> s = Files.list(source)) {
            s.filter(Files::isDirectory).map(p -> p.getFileName().toString())
                    .filter(n -> BUNDLE.matcher(n).matches()).forEach(bundles::add);
        } catch (IOException e) {
            throw new IOException("install-cni-plugin: cannot read source " + source + ": " + e, e);
        }
        if (bundles.size() != 1) {
            throw new IOException("install-cni-plugin: source " + source + " must hold exactly one jflannel-<hash> bundle, found " + bundles);
        }
        return bundles.get(0);
    }

    private static Result installLocked(Path source, String bundle, Path dest) throws IOException {
        Path launcherDest = dest.resolve(LAUNCHER);
        // the bundle the launcher names now: kept, an ADD may be running it
        Optional<String> previous = namedBundle(launcherDest).filter(b -> !b.equals(bundle));

        Path bundleDest = dest.resolve(bundle);
        boolean copied = false;
        if (!sameTree(source.resolve(bundle), bundleDest)) {
            Path tmp = Files.createTempDirectory(dest, TMP_PREFIX);
            copyTree(source.resolve(bundle), tmp);
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
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
                && Files.mismatch(launcherDest, source.resolve(LAUNCHER)) == -1L
                && Files.isExecutable(launcherDest))) {
            copyAtomically(source.resolve(LAUNCHER), launcherDest);
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
        long size = Files.size(launcher);
        if (size >= TRAILER_SIZE) {
            ByteBuffer t = ByteBuffer.allocate(TRAILER_SIZE);
            try (FileChannel ch = FileChannel.open(launcher, StandardOpenOption.READ)) {
                while (t.hasRemaining() && ch.read(t, size - TRAILER_SIZE + t.position()) > 0) {
                    // reads the trailer whole
                }
            }
            String trailer = new String(t.array(), StandardCharsets.ISO_8859_1);
            if (trailer.startsWith(TRAILER_MAGIC)) {
                Matcher m = BUNDLE.matcher("jflannel-" + trailer.substring(24, 36));
                return m.matches() ? Optional.of(m.group()) : Optional.empty();
            }
        }
        if (size > 64 * 1024) {
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

    /** Whether {@code installed} holds every file of {@code source} with the same size and mode (cheap; names carry the hash). */
    static boolean sameTree(Path source, Path installed) throws IOException {
        if (!Files.isDirectory(installed, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        try (Stream<Path> s = Files.walk(source)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                Path q = installed.resolve(source.relativize(p).toString());
                if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    if (!Files.isDirectory(q, LinkOption.NOFOLLOW_LINKS)) {
                        return false;
                    }
                } else if (Files.isSymbolicLink(p)) {
                    if (!Files.isSymbolicLink(q) || !Files.readSymbolicLink(p).equals(Files.readSymbolicLink(q))) {
                        return false;
                    }
                } else if (!Files.isRegularFile(q, LinkOption.NOFOLLOW_LINKS) || Files.size(p) != Files.size(q)
                        || !Files.getPosixFilePermissions(p).equals(Files.getPosixFilePermissions(q))) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Copies a tree (files, modes, symlinks), fsyncing every file and directory. */
    private static void copyTree(Path from, Path to) throws IOException {
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                Path d = to.resolve(from.relativize(dir).toString());
                if (!Files.isDirectory(d)) {
                    Files.createDirectory(d);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Path f = to.resolve(from.relativize(file).toString());
                if (attrs.isSymbolicLink()) {
                    Files.createSymbolicLink(f, Files.readSymbolicLink(file));
                } else {
                    Files.copy(file, f, StandardCopyOption.COPY_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
                    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                        ch.force(true);
                    }
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                if (e != null) {
                    throw e;
                }
                Path d = to.resolve(from.relativize(dir).toString());
                Files.setPosixFilePermissions(d, Files.getPosixFilePermissions(dir));
                fsync(d);
                return FileVisitResult.CONTINUE;
            }
        });
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
