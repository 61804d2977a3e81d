package org.jflannel.cni;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The scratch files in {@code dataDir}: one per container, holding the exact delegate bytes so DEL
 * can undo what ADD did without subnet.env (REFERENCE §11.5). Owns the directory (mode 0700) and
 * the files (0600). Files are written atomically (temporary file, fsync, rename) so a crash never
 * leaves a half-written file for DEL to choke on. Temporary names start with '.', which no
 * container ID can, so GC never mistakes them for containers.
 */
final class ScratchStore {

    private final String dataDir;

    ScratchStore(String dataDir) {
        this.dataDir = dataDir;
    }

    /** filepath.Join(dataDir, id): with an empty dataDir the file is relative to the working directory. */
    Path path(String containerId) {
        return dataDir.isEmpty() ? Path.of(containerId) : Path.of(dataDir, containerId);
    }

    void write(String containerId, byte[] bytes) throws CniException {
        if (dataDir.isEmpty()) {
            throw CniException.internal("mkdir : no such file or directory"); // os.MkdirAll("")
        }
        Path dir = Path.of(dataDir);
        Path tmp = dir.resolve("." + containerId + "." + Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".tmp");
        if (!Files.isDirectory(dir)) { // os.MkdirAll's errors: "mkdir PATH: REASON"
            if (Files.exists(dir)) {
                throw CniException.internal("mkdir " + dataDir + ": not a directory");
            }
            try {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (IOException e) {
                throw CniException.internal(goError("mkdir", e));
            }
        }
        try {
            try (FileChannel ch = FileChannel.open(tmp, java.util.Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
                ByteBuffer buf = ByteBuffer.wrap(bytes);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(true);
            }
            Files.move(tmp, path(containerId), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            deleteQuietly(tmp);
            throw CniException.internal(goError("open", e));
        }
    }

    /** The stored bytes, or empty when there is no file. */
    Optional<byte[]> read(String containerId) throws CniException {
        Path p = path(containerId);
        try {
            return Optional.of(Files.readAllBytes(p));
        } catch (NoSuchFileException | NotDirectoryException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw CniException.internal(Files.isDirectory(p) ? "read " + p + ": is a directory" : goError("open", e));
        }
    }

    void remove(String containerId) {
        deleteQuietly(path(containerId));
    }

    /** Container IDs that have a scratch file (names that are valid container IDs). */
    List<String> containerIds() throws CniException {
        List<String> ids = new ArrayList<>();
        if (dataDir.isEmpty() || !Files.isDirectory(Path.of(dataDir))) {
            return ids;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of(dataDir))) {
            for (Path p : ds) {
                String name = p.getFileName().toString();
                if (Protocol.isValidId(name) && Files.isRegularFile(p)) {
                    ids.add(name);
                }
            }
        } catch (IOException e) {
            throw CniException.internal(goError("open", e));
        }
        return ids;
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            // best effort, as upstream: DEL may continue when the file cannot be removed
        }
    }

    /** Go's "op path: reason" text for an I/O error. */
    static String goError(String op, IOException e) {
        String reason;
        if (e instanceof NoSuchFileException || e instanceof NotDirectoryException) {
            reason = "no such file or directory";
        } else if (e instanceof AccessDeniedException) {
            reason = "permission denied";
        } else if (e instanceof FileAlreadyExistsException) {
            reason = "file exists";
        } else {
            reason = String.valueOf(e.getMessage()).toLowerCase(java.util.Locale.ROOT);
        }
        String file = e instanceof java.nio.file.FileSystemException fse && fse.getFile() != null ? fse.getFile() : "";
        return op + " " + file + ": " + reason;
    }
}
