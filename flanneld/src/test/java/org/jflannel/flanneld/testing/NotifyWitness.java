package org.jflannel.flanneld.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/**
 * systemd's side of sd_notify, played by python3 (independent of our sockaddr encoding): binds an
 * AF_UNIX datagram socket at a path and, when the first datagram arrives, records it together with
 * whether a given file existed at that moment (READY=1 must come after subnet.env). Python's own
 * alarm bounds its life.
 */
public final class NotifyWitness implements AutoCloseable {
    private static final String SCRIPT = String.join("\n",
            "import os, signal, socket, sys",
            "signal.alarm(int(sys.argv[3]))",
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)",
            "s.bind(sys.argv[1])",
            "print('bound', flush=True)",
            "d = s.recv(65536)",
            "print(d.hex(), os.path.exists(sys.argv[2]), flush=True)");

    private final Process process;
    private final BufferedReader out;

    private NotifyWitness(Process process) {
        this.process = process;
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    /** What arrived first and whether {@code watched} existed when it did. */
    public record Datagram(String text, boolean watchedFileExisted) {
    }

    /** Returns once {@code socket} is bound; the witness lives at most {@code lifetimeSeconds}. */
    public static NotifyWitness bind(Path socket, Path watched, int lifetimeSeconds) throws IOException {
        Process p = new ProcessBuilder("python3", "-c", SCRIPT, socket.toString(), watched.toString(),
                Integer.toString(lifetimeSeconds)).redirectErrorStream(true).start();
        NotifyWitness w = new NotifyWitness(p);
        String first = w.out.readLine();
        if (!"bound".equals(first)) {
            w.close();
            throw new IOException("python3 witness could not bind " + socket + ": " + first);
        }
        return w;
    }

    /** Blocks until the first datagram (or the witness's end, then fails). */
    public Datagram first() throws IOException {
        String line = out.readLine();
        if (line == null || !line.matches("[0-9a-f]* (True|False)")) {
            throw new IOException("python3 witness received nothing: " + line);
        }
        String[] parts = line.split(" ");
        return new Datagram(new String(HexFormat.of().parseHex(parts[0]), StandardCharsets.UTF_8), parts[1].equals("True"));
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
