package org.jflannel.core;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes files that other processes read (subnet.env, CNI scratch files, the conflist) so that a
 * reader sees either the old or the new content, never a part: a temporary file in the same
 * directory, fsync, rename(2) over the target, fsync of the directory. Modes are set with chmod,
 * so the process umask does not change them.
 */
public final class AtomicFile {
    private static final Logger LOG = LoggerFactory.getLogger(AtomicFile.class);

    private AtomicFile() {
    }

    /**
     * Replaces {@code target} with {@code content}.
     *
     * @param fileMode e.g. {@code "rw-r--r--"}
     * @param dirMode  mode of the parent directories this call creates, e.g. {@code "rwxr-xr-x"};
     *                 directories that exist already are left as they are
     */
    public static void write(Path target, byte[] content, String fileMode, String dirMode) throws IOException {
        Set<PosixFilePermission> filePerms = PosixFilePermissions.fromString(fileMode);
        Set<PosixFilePermission> dirPerms = PosixFilePermissions.fromString(dirMode);
        Path abs = target.toAbsolutePath();
        Path dir = abs.getParent();
        createDirectories(dir, dirPerms);
        Path tmp = Files.createTempFile(dir, "." + abs.getFileName() + ".", ".tmp");
        boolean renamed = false;
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                ByteBuffer buf = ByteBuffer.wrap(content);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(true);
            }
            Files.setPosixFilePermissions(tmp, filePerms);
            Files.move(tmp, abs, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            renamed = true;
        } finally {
            if (!renamed) {
                Files.deleteIfExists(tmp);
            }
        }
        syncDirectory(dir);
    }

    /** mkdir -p, with an explicit chmod of every directory created here (umask-proof). */
    private static void createDirectories(Path dir, Set<PosixFilePermission> perms) throws IOException {
        Deque<Path> missing = new ArrayDeque<>();
        for (Path p = dir; p != null && !Files.isDirectory(p); p = p.getParent()) {
            missing.push(p);
        }
        while (!missing.isEmpty()) {
            Path p = missing.pop();
            try {
                Files.createDirectory(p);
                Files.setPosixFilePermissions(p, perms);
            } catch (FileAlreadyExistsException e) {
                if (!Files.isDirectory(p)) {
                    throw e; // a file where a directory should be
                }
                // created concurrently by someone else: fine
            }
        }
    }

    /** Makes the rename durable; a file system that cannot sync directories only loses that guarantee. */
    private static void syncDirectory(Path dir) {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            LOG.debug("directory fsync failed dir={} error={}", dir, e.toString());
        }
    }
}
