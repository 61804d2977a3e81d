package org.jflannel.linuxnet.sys;

import com.sun.jna.LastErrorException;
import com.sun.jna.StringArray;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.internal.LibC;

/**
 * execve(2) of this process: another program in its place, the same PID, so a container's init, its
 * signals and its supervisor see one process throughout. Every descriptor above stderr is marked
 * close-on-exec first (the JVM's own files, sockets a caller opened), so the new image inherits only
 * stdin, stdout and stderr.
 */
public final class Exec {
    private Exec() {
    }

    /**
     * Replaces this process by {@code program} with {@code argv} (its {@code argv[0]} first) and exactly
     * {@code env}. Returns only by throwing: the call failed, and this process goes on as it was.
     */
    public static void replaceProcess(Path program, List<String> argv, Map<String, String> env) throws NetlinkException {
        if (argv.isEmpty()) {
            throw new IllegalArgumentException("execve " + program + ": argv must hold at least argv[0]");
        }
        List<String> envp = new ArrayList<>(env.size());
        env.forEach((k, v) -> envp.add(k + "=" + v));
        closeOnExecAboveStderr();
        System.out.flush();
        System.err.flush();
        try {
            LibC.execve(program.toString(), new StringArray(argv.toArray(String[]::new)), new StringArray(envp.toArray(String[]::new)));
        } catch (LastErrorException e) {
            throw new NetlinkException("execve", program.toString(), e.getErrorCode(), "");
        }
        throw new NetlinkException("execve", program.toString(), 0, "returned without an error");
    }

    private static void closeOnExecAboveStderr() throws NetlinkException {
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
            for (Path fd : fds) {
                int n = Integer.parseInt(fd.getFileName().toString());
                if (n > 2) {
                    try {
                        LibC.fcntl(n, LibC.F_SETFD, LibC.FD_CLOEXEC);
                    } catch (LastErrorException e) {
                        // EBADF: the directory stream's own descriptor, closed by now; others are gone already
                    }
                }
            }
        } catch (IOException e) {
            throw new NetlinkException("execve", "/proc/self/fd", 0, "descriptors not listed: " + e.getMessage());
        }
    }
}
