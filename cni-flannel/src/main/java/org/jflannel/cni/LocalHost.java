package org.jflannel.cni;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jflannel.core.CniSubnetEnv;
import org.jflannel.core.ConfigException;

/** The host as the plugin's own JVM sees it: it runs where the runtime started it. */
final class LocalHost implements Host {

    private final Map<String, String> env;

    LocalHost(Map<String, String> env) {
        this.env = env;
    }

    @Override
    public CniSubnetEnv readSubnetEnv(String path) throws ConfigException {
        return CniSubnetEnv.read(path);
    }

    @Override
    public Optional<String> findPlugin(String plugin, List<String> dirs) {
        for (String dir : dirs) {
            Path p = dir.isEmpty() ? Path.of(plugin) : Path.of(dir, plugin);
            if (Files.isRegularFile(p)) {
                return Optional.of(p.toString());
            }
        }
        return Optional.empty();
    }

    @Override
    public Ran run(String plugin, String path, String command, byte[] stdin) throws StartFailure, CniException {
        ProcessBuilder pb = new ProcessBuilder(path);
        Map<String, String> childEnv = pb.environment();
        childEnv.clear();
        childEnv.putAll(env);
        childEnv.put("CNI_COMMAND", command);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new StartFailure(reason(String.valueOf(e.getMessage())));
        }
        return collect(p, stdin);
    }

    private static Ran collect(Process p, byte[] config) throws CniException {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        // an anonymous class, not a lambda: a lambda's first use costs the JVM a bootstrap per pod
        Thread errReader = new Thread("delegate-stderr") {
            @Override
            public void run() {
                copy(p.getErrorStream(), err);
            }
        };
        errReader.start();
        try {
            try (OutputStream in = p.getOutputStream()) {
                in.write(config);
            } catch (IOException e) {
                // the delegate may exit without reading stdin; its exit status tells the story
            }
            byte[] out = p.getInputStream().readAllBytes();
            int exit = p.waitFor();
            errReader.join();
            return new Ran(exit, out, err.toByteArray());
        } catch (IOException e) {
            throw CniException.internal("reading delegate output: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw CniException.internal("interrupted while waiting for the delegate");
        }
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        try (in) {
            in.transferTo(out);
        } catch (IOException e) {
            // stderr is informational only
        }
    }

    /** "error=13, Permission denied" gives "permission denied", as Go's errno text. */
    private static String reason(String javaMessage) {
        int comma = javaMessage.indexOf(", ", javaMessage.indexOf("error="));
        String r = comma >= 0 ? javaMessage.substring(comma + 2) : javaMessage;
        return r.isEmpty() ? r : Character.toLowerCase(r.charAt(0)) + r.substring(1);
    }

    @Override
    public void writeScratch(String dataDir, String containerId, byte[] bytes) throws CniException {
        new ScratchStore(dataDir).write(containerId, bytes);
    }

    @Override
    public Optional<byte[]> readScratch(String dataDir, String containerId) throws CniException {
        return new ScratchStore(dataDir).read(containerId);
    }

    @Override
    public void removeScratch(String dataDir, String containerId) {
        new ScratchStore(dataDir).remove(containerId);
    }

    @Override
    public List<String> scratchIds(String dataDir) throws CniException {
        return new ScratchStore(dataDir).containerIds();
    }

    @Override
    public boolean isOwnNetns(String netns) {
        try {
            // device and inode of both (stat), as skel compares them; no attribute-view maps
            return Files.isSameFile(Path.of("/proc/self/ns/net"), Path.of(netns));
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false; // a path that does not exist is not the plugin's namespace
        }
    }
}
