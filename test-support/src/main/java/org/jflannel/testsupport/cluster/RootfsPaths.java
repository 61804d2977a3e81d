package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Resolves a path as a process chrooted into a root file system would see it: symbolic links inside
 * it (Debian's {@code /var/run -> /run}) are followed relative to that root, never to the machine's
 * root, so a bind mount onto the result lands inside the image and not on the host.
 */
final class RootfsPaths {
    private static final int MAX_LINKS = 40;

    private RootfsPaths() {
    }

    /** {@code containerPath} inside {@code root}, as a path relative to {@code root} (no {@code ..}, no links). */
    static String resolve(Path root, String containerPath) throws IOException {
        Deque<String> todo = new ArrayDeque<>(List.of(containerPath.split("/")));
        List<String> done = new ArrayList<>();
        int links = 0;
        while (!todo.isEmpty()) {
            String c = todo.pollFirst();
            if (c.isEmpty() || c.equals(".")) {
                continue;
            }
            if (c.equals("..")) {
                if (!done.isEmpty()) {
                    done.remove(done.size() - 1);
                }
                continue;
            }
            Path candidate = root.resolve(String.join("/", done)).resolve(c);
            if (Files.isSymbolicLink(candidate)) {
                if (++links > MAX_LINKS) {
                    throw new IOException("too many symbolic links resolving " + containerPath + " in " + root);
                }
                String target = Files.readSymbolicLink(candidate).toString();
                if (target.startsWith("/")) {
                    done.clear();
                }
                List<String> parts = List.of(target.split("/"));
                for (int i = parts.size() - 1; i >= 0; i--) {
                    todo.addFirst(parts.get(i));
                }
                continue;
            }
            done.add(c);
        }
        return String.join("/", done);
    }
}
