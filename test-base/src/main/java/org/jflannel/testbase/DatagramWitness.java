package org.jflannel.testbase;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/**
 * systemd's side of sd_notify, played by python3 so that the address encoding is not ours: binds an
 * AF_UNIX datagram socket (a leading {@code @} = the abstract namespace) and reports the first
 * datagram, with whether a watched file existed when it arrived (READY=1 must come after subnet.env).
 * Python's own alarm bounds its life. Owns one python3 process, killed in {@link #close()}.
 */
public final class DatagramWitness implements AutoCloseable {
    private static final String SCRIPT = String.join("\n",
            "import os, signal, socket, sys",
            "signal.alarm(int(sys.argv[3]))",
            "a = sys.argv[1]",
            "a = '\\0' + a[1:] if a.startswith('@') else a",
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)",
            "s.bind(a)",
            "print('bound', flush=True)",
            "d = s.recv(65536)",
            "print(d.hex(), bool(sys.argv[2]) and os.path.exists(sys.argv[2]), flush=True)");

    private final Process process;
    private final BufferedReader out;

    private DatagramWitness(Process process) {
        this.process = process;
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    /** The first datagram (UTF-8) and whether the watched file existed at its arrival. */
    public record Datagram(String text, boolean watchedFileExisted) {
    }

    /** Returns once {@code address} is bound; the witness lives at most {@code lifetimeSeconds}. */
    public static DatagramWitness bind(String address, int lifetimeSeconds) throws IOException {
        return bind(address, null, lifetimeSeconds);
    }

    /** As {@link #bind(String, int)}, also noting whether {@code watched} exists when the datagram arrives. */
    public static DatagramWitness bind(String address, Path watched, int lifetimeSeconds) throws IOException {
        Process p = new ProcessBuilder("python3", "-c", SCRIPT, address, watched == null ? "" : watched.toString(),
                Integer.toString(lifetimeSeconds)).redirectErrorStream(true).start();
        DatagramWitness w = new DatagramWitness(p);
        String first = w.out.readLine();
        if (!"bound".equals(first)) {
            w.close();
            throw new IOException("python3 witness could not bind " + address + ": " + first);
        }
        return w;
    }

    /** Blocks until the first datagram; fails when none came within the witness's lifetime. */
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
