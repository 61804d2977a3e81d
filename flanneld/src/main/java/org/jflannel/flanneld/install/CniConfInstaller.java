package org.jflannel.flanneld.install;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import org.jflannel.core.AtomicFile;

/**
 * {@code flanneld install-cni-conf SRC DEST}: upstream's install-cni init container ({@code cp -f
 * cni-conf.json 10-flannel.conflist}), made safe for a kubelet that reads /etc/cni/net.d at any moment:
 * the new content goes to a temporary file beside DEST, is fsynced and renamed over DEST (the directory
 * fsynced too), so a reader sees the old file or the new one, never a part. Unchanged content is not
 * rewritten (an init container runs on every pod restart; the kubelet watches the directory).
 */
public final class CniConfInstaller {
    /** What an install did. */
    public record Result(Path dest, boolean changed) {
    }

    private CniConfInstaller() {
    }

    public static Result install(Path src, Path dest) throws IOException {
        byte[] content;
        try {
            content = Files.readAllBytes(src);
        } catch (NoSuchFileException e) {
            throw new IOException("install-cni-conf: source " + src + " does not exist", e);
        } catch (IOException e) {
            throw new IOException("install-cni-conf: cannot read source " + src + ": " + e, e);
        }
        if (Files.isDirectory(dest)) {
            throw new IOException("install-cni-conf: destination " + dest + " is a directory, not a file path");
        }
        if (Files.isRegularFile(dest) && Arrays.equals(Files.readAllBytes(dest), content)) {
            return new Result(dest, false);
        }
        try {
            AtomicFile.write(dest, content, "rw-r--r--", "rwxr-xr-x");
        } catch (IOException e) {
            throw new IOException("install-cni-conf: cannot write " + dest + ": " + e, e);
        }
        return new Result(dest, true);
    }
}
