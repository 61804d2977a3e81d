package org.jflannel.linuxnet;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/**
 * An independent receiver for sd_notify datagrams: python3 binds an AF_UNIX datagram socket (a
 * leading {@code @} = abstract namespace, encoded by Python, not by us) and prints the first
 * datagram it gets in hex. Python's own alarm bounds its life.
 */
final class DatagramWitness implements AutoCloseable {
    static final int LIFETIME_SECONDS = 20;
    private static final String SCRIPT = String.join("\n",
            "import signal, socket, sys",
            "signal.alarm(int(sys.argv[2]))",
            "a = sys.argv[1]",
            "a = '\\0' + a[1:] if a.startswith('@') else a",
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)",
            "s.bind(a)",
            "print('bound', flush=True)",
            "print(s.recv(65536).hex(), flush=True)");

    private final Process process;
    private final BufferedReader out;

    private DatagramWitness(Process process) {
        this.process = process;
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    /** Returns once the socket is bound; fails with python's output when it could not bind. */
    static DatagramWitness bind(String address) throws IOException {
        Process p = new ProcessBuilder("python3", "-c", SCRIPT, address, Integer.toString(LIFETIME_SECONDS))
                .redirectErrorStream(true).start();
        DatagramWitness w = new DatagramWitness(p);
        String first = w.out.readLine();
        if (!"bound".equals(first)) {
            w.close();
            throw new IOException("python3 witness could not bind " + address + ": " + first);
        }
        return w;
    }

    /** The first datagram's bytes; fails when none came within the witness's lifetime. */
    byte[] received() throws IOException {
        String line = out.readLine();
        if (line == null || !line.matches("[0-9a-f]*")) {
            throw new IOException("python3 witness received nothing: " + line);
        }
        return HexFormat.of().parseHex(line);
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
